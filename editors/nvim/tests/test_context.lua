-- #references in the chat's input become structured attachments of
-- zot/prompt (docs/protocol.md "Attachments"): the model gets each as a
-- <context> block — #buffer with its unsaved typing, #file:<path>,
-- #selection (the last visual selection), #diagnostics — and the chat
-- shows them as chips, not pasted text. :ZotPrompt from visual mode
-- attaches the selection the same way. #file: completes workspace files.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local refs = require('zot.refs')
local notes = H.write('notes.txt', 'alpha\nbeta\ngamma\n')
H.write('src/app.go', 'package app\n\nfunc Add(a, b int) int { return a + b }\n')
vim.cmd('edit ' .. vim.fn.fnameescape(notes))
local nbuf = vim.api.nvim_get_current_buf()
vim.cmd('normal! 2GVj\27') -- lines 2-3, linewise
local dns = vim.api.nvim_create_namespace('zot_test')
vim.diagnostic.set(dns, nbuf, {
  { lnum = 0, col = 0, end_lnum = 0, end_col = 5, message = 'alpha is misspelt', severity = 2, source = 'speller' },
})
-- Unsaved typing: #buffer sends the buffer as it is, not the disk.
vim.api.nvim_buf_set_lines(nbuf, 3, 3, false, { 'delta, not saved' })

-- Completion: files of the workspace, and the reference names.
local words = {}
for _, it in ipairs(refs.complete(H.ws, '#file:app')) do
  words[#words + 1] = it.word
end
H.ok(vim.tbl_contains(words, '#file:src/app.go'), '#file:app completes src/app.go: ' .. vim.inspect(words))
H.eq('#selection', (refs.complete(H.ws, '#sel')[1] or {}).word, '#sel completes')

-- :ZotPrompt without words: the cursor goes to the input.
vim.cmd('ZotPrompt')
local input = require('zot.input').get(H.ws, false)
H.eq(input.buf, vim.api.nvim_get_current_buf(), 'the input has the cursor')
vim.cmd('stopinsert')
-- The omnifunc completes in the input.
vim.api.nvim_buf_set_lines(input.buf, 0, -1, false, { 'see #file:src/ap' })
vim.api.nvim_win_set_cursor(0, { 1, 16 })
H.eq(4, refs.omnifunc(1, ''), 'the completion starts at the #')
H.eq('#file:src/app.go', refs.omnifunc(0, '#file:src/ap')[1].word, 'and offers the file')

vim.api.nvim_buf_set_lines(input.buf, 0, -1, false, {
  'Compare #buffer with #file:src/app.go,',
  'then explain #selection and #diagnostics.',
})
H.keys('<C-s>')
local run = H.wait_run()
H.ok(not run.error, 'the run failed: ' .. tostring(run.error))
H.eq({ '' }, vim.api.nvim_buf_get_lines(input.buf, 0, -1, false), 'the input is empty after sending')

local sent = H.last_user_text()
H.ok(
  sent:find('Compare #buffer with #file:src/app.go,\nthen explain #selection and #diagnostics.', 1, true),
  'the text:\n' .. sent
)
H.ok(sent:find('<context kind="file" label="notes.txt"', 1, true), '#buffer as a file block:\n' .. sent)
H.ok(sent:find('delta, not saved', 1, true), '#buffer with the unsaved typing:\n' .. sent)
H.ok(sent:find('<context kind="file" label="app.go"', 1, true), '#file:src/app.go as a file block:\n' .. sent)
H.ok(sent:find('func Add(a, b int)', 1, true), "with the file's text:\n" .. sent)
H.ok(sent:find('<context kind="selection" label="notes.txt:2-3"', 1, true), '#selection:\n' .. sent)
H.ok(sent:find('<context kind="problems"', 1, true), '#diagnostics:\n' .. sent)
H.ok(sent:find('notes.txt:1:1: warning: alpha is misspelt', 1, true), 'the diagnostic:\n' .. sent)
local text = H.chat_text()
H.ok(
  text:find(
    '## You\nCompare #buffer with #file:src/app.go,\nthen explain #selection and #diagnostics.\n📎 notes.txt\n📎 app.go\n📎 notes.txt:2-3\n📎 problems: notes.txt',
    1,
    true
  ),
  'the chat shows chips, not the blocks:\n' .. text
)
H.ok(not text:find('<context', 1, true), 'no raw block in the chat:\n' .. text)

-- A reference that cannot be resolved: nothing is sent, the text stays.
local errors = H.capture_notify()
vim.api.nvim_buf_set_lines(input.buf, 0, -1, false, { 'look at #file:missing.txt' })
H.keys('<C-s>')
H.eq({ 'look at #file:missing.txt' }, vim.api.nvim_buf_get_lines(input.buf, 0, -1, false), 'the text stays')
H.ok(errors[1] and errors[1].msg:find('missing.txt', 1, true), 'the error names the file: ' .. vim.inspect(errors))
vim.api.nvim_buf_set_lines(input.buf, 0, -1, false, { '' })

-- :ZotPrompt from visual mode: the selection as an attachment (characterwise).
vim.api.nvim_set_current_win(vim.fn.win_findbuf(nbuf)[1])
vim.cmd('normal! 3G0lv$h\27')
vim.cmd("'<,'>ZotPrompt what is this?")
run = H.wait_run(run)
sent = H.last_user_text()
H.ok(sent:find('what is this?', 1, true), 'the text:\n' .. sent)
H.ok(sent:find('<context kind="selection" label="notes.txt:3-3"', 1, true), 'the selection block:\n' .. sent)
H.ok(sent:find('\namma\n', 1, true) and not sent:find('gamma', 1, true), 'the characterwise selection:\n' .. sent)
H.ok(H.chat_text():find('## You\nwhat is this?\n📎 notes.txt:3-3', 1, true), 'its chip:\n' .. H.chat_text())

-- :'<,'>ZotPrompt without words: the input takes the cursor with the
-- selection attached (its bar shows it) until the prompt is sent.
vim.api.nvim_set_current_win(vim.fn.win_findbuf(nbuf)[1])
vim.cmd('normal! 1GVj\27')
vim.cmd("'<,'>ZotPrompt")
H.eq(input.buf, vim.api.nvim_get_current_buf(), 'the input has the cursor')
vim.cmd('stopinsert')
H.ok(require('zot.input').bar_text(input):find('📎 notes.txt:1-2', 1, true), 'the bar shows the attachment')
vim.api.nvim_buf_set_lines(input.buf, 0, -1, false, { 'and these lines?' })
H.keys('<C-s>')
run = H.wait_run(run)
sent = H.last_user_text()
H.ok(sent:find('and these lines?', 1, true), 'the text:\n' .. sent)
H.ok(sent:find('<context kind="selection" label="notes.txt:1-2"', 1, true), 'the attached selection:\n' .. sent)
H.ok(sent:find('\nalpha\nbeta\n', 1, true), 'its lines:\n' .. sent)
H.ok(not require('zot.input').bar_text(input):find('📎', 1, true), 'sent: no longer attached')
H.done()
