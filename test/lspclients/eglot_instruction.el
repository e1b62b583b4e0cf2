;;; eglot_instruction.el --- Emacs eglot (Debian's 1.9) drives zot lsp  -*- lexical-binding: t -*-
;; run.sh runs it with `emacs --batch -q -l' (-q, not -Q: Debian's site-start
;; activates the elpa-eglot package). eglot connects to the real
;; `zot lsp'; `eglot-code-actions' on a `# zot:' line lists zot's actions
;; without a model call and runs "zot: run this instruction": the buffer
;; gets the edit and loses the instruction line, the file stays as saved
;; until the buffer is, and the answer is a window/showMessage. eglot 1.9
;; announces no window capabilities, so zot sends it no progress.
;; Waits are bounded to catch hangs; nothing is asserted about timing.
(require 'eglot)
(require 'cl-lib)
(require 'json)

(defvar zt-ws (file-name-as-directory (getenv "ZOT_TEST_WS")))
(defvar zt-url (getenv "ZOT_TEST_URL"))
(defvar zt-messages nil "What eglot showed, newest first.")

(defvar zt-server nil)
(defun zt-fail (fmt &rest args)
  (princ (format "FAIL: %s\n" (apply #'format fmt args)))
  (when (and zt-server (getenv "ZOT_TEST_VERBOSE"))
    (princ (with-current-buffer (jsonrpc-events-buffer zt-server) (buffer-string))))
  (kill-emacs 1))

(defun zt-idle ()
  "Run eglot's didChange idle timers. Emacs in batch has no command loop
and never idles, so the test plays the user who stopped typing."
  (dolist (b (buffer-list))
    (with-current-buffer b
      (when (and (boundp 'eglot--change-idle-timer) (timerp eglot--change-idle-timer))
        (let ((tm eglot--change-idle-timer))
          (cancel-timer tm)
          (apply (timer--function tm) (timer--args tm)))))))

(defun zt-wait (what pred)
  "Wait (at most 30 s, to catch hangs) until PRED is non-nil."
  (let ((deadline (+ (float-time) 30)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.02)
      (zt-idle))
    (or (funcall pred) (zt-fail "timed out waiting for %s" what))))

(defun zt-model-requests ()
  (let ((out (shell-command-to-string
              (format "curl -sS --max-time 20 %s/llmtest/requests" zt-url))))
    (condition-case err (json-parse-string out)
      (error (zt-fail "GET /llmtest/requests: %S %s" err out)))))

(defun zt-file-text (path)
  (with-temp-buffer
    (insert-file-contents path)
    (buffer-string)))

;; eglot's messages (window/showMessage among them), recorded; they are
;; still printed.
(advice-add 'eglot--message :before
            (lambda (fmt &rest args) (push (apply #'format fmt args) zt-messages)))

(setq eglot-confirm-server-initiated-edits nil) ; no y-or-n-p in batch
(defvar zt-orig (concat "def add(a, b):\n    return a + b\n\n\n"
                        "def fact(n):\n    # zot: make this iterative\n"
                        "    return 1 if n == 0 else n * fact(n - 1)\n"))
(defvar zt-file (expand-file-name "calc.py" zt-ws))
(with-temp-file zt-file (insert zt-orig))
(find-file zt-file)
(python-mode)
;; The user's configuration (README's form): zot lsp for Python buffers.
(add-to-list 'eglot-server-programs
             `((python-mode) . (,(getenv "ZOT_BIN") "lsp" "--api-key" "test-key"
                                "--base-url" ,zt-url "--no-session"
                                :initializationOptions (:permissionMode "auto"))))
(call-interactively #'eglot)
(zt-wait "eglot to connect" (lambda () (eglot-current-server)))
(setq zt-server (eglot-current-server))

;; The list, on the instruction line: no model call.
(goto-char (point-min))
(search-forward "# zot:")
(let ((titles (mapcar (lambda (a) (plist-get a :title))
                      (eglot-code-actions (point) nil nil nil))))
  (unless (equal (car titles) "zot: run this instruction")
    (zt-fail "actions: %S" titles))
  (unless (member "zot: explain" titles)
    (zt-fail "actions: %S" titles)))
(unless (= 0 (length (zt-model-requests)))
  (zt-fail "listing code actions made %d model requests" (length (zt-model-requests))))

;; Run it as a user does: eglot-code-actions, pick the action.
(let ((last-nonmenu-event 13)) ; a key, not a mouse click: completing-read
  (cl-letf (((symbol-function 'completing-read)
             (lambda (_prompt items &rest _) (car (assoc "zot: run this instruction" items)))))
    (eglot-code-actions (point) nil nil t)))
(defvar zt-want (concat "def add(a, b):\n    return a + b\n\n\n"
                        "def fact(n):\n    r = 1\n    for i in range(2, n + 1):\n"
                        "        r *= i\n    return r\n"))
(zt-wait "the answer" (lambda () (cl-some (lambda (m) (string-match-p "zot: Made it iterative\\." m)) zt-messages)))
(unless (equal (buffer-string) zt-want)
  (zt-fail "buffer:\n%s" (buffer-string)))
(unless (buffer-modified-p) (zt-fail "the buffer is not modified"))
;; No progress for a client that announced none.
(with-current-buffer (jsonrpc-events-buffer zt-server)
  (goto-char (point-min))
  (when (search-forward "workDoneProgress" nil t)
    (zt-fail "zot sent progress to eglot 1.9:\n%s" (buffer-string))))

;; The run is over once zot sent its last event (zot/event done, which
;; eglot ignores but logs): the file is still as saved; the editor's save
;; writes the edit.
(zt-wait "the run's end" (lambda ()
                           (with-current-buffer (jsonrpc-events-buffer zt-server)
                             (save-excursion
                               (goto-char (point-min))
                               (search-forward "(:type \"done\"" nil t)))))
(unless (equal (zt-file-text zt-file) zt-orig)
  (zt-fail "the file changed on disk before the buffer was saved:\n%s" (zt-file-text zt-file)))
(save-buffer)
(unless (equal (zt-file-text zt-file) zt-want)
  (zt-fail "the file after saving:\n%s" (zt-file-text zt-file)))

(eglot-shutdown zt-server)
(zt-wait "zot lsp to exit" (lambda () (not (process-live-p (jsonrpc--process zt-server)))))
(princ "\nPASS\n")
(kill-emacs 0)
