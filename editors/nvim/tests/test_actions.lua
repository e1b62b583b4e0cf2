-- Actions on answers in the chat buffer: on a code block, gy yanks it, gp
-- inserts it into the last window at its cursor, ga applies it to its
-- file through zot/applyCode (reviewed in "ask" mode, like the model's
-- edits); gr retries the last answer and ge edits an earlier message and
-- resends it — checked in what the scripted model received.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ permission = 'ask' })
H.write('calc.py', 'def add(a, b):\n    pass\n')
local notes = H.write('notes.txt', 'one\n\nthree\n')
vim.cmd('edit ' .. vim.fn.fnameescape(notes))
local nbuf = vim.api.nvim_get_current_buf()
vim.api.nvim_win_set_cursor(0, { 2, 0 })

vim.cmd('ZotPrompt write a helper')
local run = H.wait_run()
H.ok(not run.error, 'the run failed: ' .. tostring(run.error))
local chat = H.chat()
local cwin = vim.fn.win_findbuf(chat.buf)[1]
vim.api.nvim_set_current_win(cwin)
local function cursor_on(text)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)) do
    if l:find(text, 1, true) then
      vim.api.nvim_win_set_cursor(cwin, { i, 0 })
      return
    end
  end
  error('not in the chat: ' .. text .. '\n' .. H.chat_text())
end
local code = { 'def add(a, b):', '    return a + b' }

-- gy: yank.
cursor_on('return a + b')
vim.fn.setreg('"', 'before')
H.keys('gy')
H.eq(code, vim.fn.getreg('"', 1, true), 'gy yanked the block')
H.eq('V', vim.fn.getregtype('"'), 'linewise')

-- gp: into the last window, on its blank cursor line.
cursor_on('def add')
H.keys('gp')
H.eq(nbuf, vim.api.nvim_get_current_buf(), 'the focus went to the file')
H.eq(
  { 'one', 'def add(a, b):', '    return a + b', 'three' },
  vim.api.nvim_buf_get_lines(nbuf, 0, -1, false),
  'gp inserted it'
)

-- ga: apply to calc.py (the file the answer names); ask mode reviews it.
local review = require('zot.review')
local asked
vim.ui.input = function(opts, cb)
  asked = opts.default
  cb(opts.default)
end
vim.api.nvim_set_current_win(cwin)
cursor_on('return a + b')
H.keys('ga')
H.eq('calc.py', asked, 'ga proposes the file the answer names')
H.wait('the review of the applied block', function()
  return #review.active == 1
end)
H.eq('apply', review.active[1].params.tool, 'reviewed as an apply')
review.accept(review.active[1])
H.wait('the apply result', function()
  return require('zot.actions').last_apply ~= nil
end)
H.eq(true, require('zot.actions').last_apply.applied, 'applied: ' .. vim.inspect(require('zot.actions').last_apply))
local calc = vim.fn.bufnr(H.ws .. '/calc.py')
H.ok(calc > 0, 'calc.py is open')
H.eq(code, vim.api.nvim_buf_get_lines(calc, 0, -1, false), 'calc.py has the block')
H.eq('def add(a, b):\n    pass\n', H.read('calc.py'), 'left unsaved, as your own edit would be')

-- gr: retry. The model gets the same prompt again, alone; the old answer goes.
local n = #H.model_requests()
vim.api.nvim_set_current_win(cwin)
H.keys('gr')
run = H.wait_run(run)
H.ok(not run.error, 'the retry failed: ' .. tostring(run.error))
local reqs = H.model_requests()
H.eq(n + 1, #reqs, 'one more model request')
local msgs = reqs[#reqs].body.messages
H.eq(1, #msgs, 'the conversation was cut before the prompt: ' .. vim.inspect(msgs))
H.ok(H.last_user_text():find('write a helper', 1, true), 'the same prompt: ' .. H.last_user_text())
local text = H.chat_text()
H.ok(not text:find('Here it is', 1, true), 'the old answer left the chat:\n' .. text)
local _, prompts = text:gsub('## You\nwrite a helper', '')
H.eq(1, prompts, 'the prompt once:\n' .. text)
H.ok(text:find('## You\nwrite a helper\n.-\n## zot\nSecond try.'), 'then the new answer:\n' .. text)

-- ge on the message: it goes to the input; sent, it replaces the message.
cursor_on('write a helper')
H.keys('ge')
local input = require('zot.input').get(H.ws, false)
H.eq(input.buf, vim.api.nvim_get_current_buf(), 'the input has the message')
H.eq({ 'write a helper' }, vim.api.nvim_buf_get_lines(input.buf, 0, -1, false), 'its text')
H.ok(require('zot.input').bar_text(input):find('editing your message', 1, true), 'the bar says so')
vim.api.nvim_buf_set_lines(input.buf, 0, -1, false, { 'write a better helper' })
H.keys('<C-s>')
run = H.wait_run(run)
H.ok(not run.error, 'the resend failed: ' .. tostring(run.error))
reqs = H.model_requests()
msgs = reqs[#reqs].body.messages
H.eq(1, #msgs, 'the edited message replaced the old one: ' .. vim.inspect(msgs))
H.ok(H.last_user_text():find('write a better helper', 1, true), 'the edited text: ' .. H.last_user_text())
text = H.chat_text()
H.ok(
  not text:find('Second try.', 1, true) and not text:find('## You\nwrite a helper', 1, true),
  'the old branch left the chat:\n' .. text
)
H.ok(text:find('## You\nwrite a better helper\n.-## zot\nBetter helper.'), 'the new one:\n' .. text)
H.ok(not require('zot.input').bar_text(input):find('editing', 1, true), 'no longer editing')

-- After /compact the messages are renumbered: one from before cannot be
-- edited (its old index could name another prompt); a new one can.
vim.cmd('ZotCommand /compact')
run = H.wait_run(run)
H.ok(H.chat_text():find('conversation compacted', 1, true), 'compacted:\n' .. H.chat_text())
vim.cmd('ZotPrompt one more')
run = H.wait_run(run)
H.ok(not run.error, 'the prompt after compaction failed: ' .. tostring(run.error))
local notes_seen = H.capture_notify()
vim.api.nvim_set_current_win(cwin)
cursor_on('write a better helper')
H.keys('ge')
H.ok(
  vim.inspect(notes_seen):find('before the conversation was compacted', 1, true),
  'ge says why not: ' .. vim.inspect(notes_seen)
)
H.ok(not require('zot.input').bar_text(input):find('editing', 1, true), 'not editing the old message')
cursor_on('one more')
H.keys('ge')
H.ok(require('zot.input').bar_text(input):find('editing your message', 1, true), 'the new message can be edited')
vim.api.nvim_buf_set_lines(input.buf, 0, -1, false, { 'one more, edited' })
H.keys('<C-s>')
run = H.wait_run(run)
H.ok(not run.error, 'the resend after compaction failed: ' .. tostring(run.error))
msgs = H.model_requests()[#H.model_requests()].body.messages
H.eq(2, #msgs, 'the summary and the edited prompt: ' .. vim.inspect(msgs))
H.ok(H.last_user_text():find('one more, edited', 1, true), 'the edited text: ' .. H.last_user_text())
text = H.chat_text()
H.ok(
  not text:find('## You\none more\n', 1, true) and text:find('write a better helper', 1, true),
  'only the new message was cut:\n' .. text
)
-- gr right after a /compact: zot has no prompt to retry (the summary is all
-- there is) and refuses; what gr cut from the view comes back as it was,
-- and the messages in it keep what they were (ge still says why not).
vim.cmd('ZotCommand /compact')
run = H.wait_run(run)
local before = H.chat_text()
local user_msgs = #require('zot.chat').get(H.ws, false).user_msgs
n = #H.model_requests()
notes_seen = H.capture_notify()
vim.api.nvim_set_current_win(cwin)
H.keys('gr')
H.wait('the retry refused', function()
  return vim.inspect(notes_seen):find('no prompt to retry', 1, true) ~= nil
end)
H.eq(before, H.chat_text(), 'the chat is back as it was')
H.eq(user_msgs, #require('zot.chat').get(H.ws, false).user_msgs, 'its messages too')
H.eq(n, #H.model_requests(), 'nothing was sent to the model')
cursor_on('one more, edited')
H.keys('ge')
H.ok(
  vim.inspect(notes_seen):find('before the conversation was compacted', 1, true),
  'ge on a put-back message says why not: ' .. vim.inspect(notes_seen)
)
H.done()
