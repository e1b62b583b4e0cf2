-- The second Neovim of test_restore.lua: same workspace, same data
-- directory, a fresh start.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local session = require('zot.store').get(H.ws).session
H.ok(session, 'a remembered session')
vim.cmd('ZotChat')
H.wait('the last conversation', function()
  return H.chat_text():find('Restored the last conversation', 1, true) ~= nil
end)
local chat = H.chat()
local text = H.chat_text()
H.ok(text:find('## You\nfirst question', 1, true), 'the prompt:\n' .. text)
H.ok(text:find('First answer, about the restore.', 1, true), 'the answer:\n' .. text)
local st = H.state()
H.wait('the state', function()
  return st.ready and st.session_id ~= nil
end)
H.eq(session, st.session_id, 'the same session')
local cwin = vim.fn.win_findbuf(chat.buf)[1]
H.eq(vim.api.nvim_buf_line_count(chat.buf), vim.api.nvim_win_get_cursor(cwin)[1], 'scrolled to the end')
local input = require('zot.input').get(H.ws, false)
H.eq({ 'an unfinished', 'second line' }, vim.api.nvim_buf_get_lines(input.buf, 0, -1, false), 'the draft')
-- History: <Up> brings back the earlier prompt, <Down> the draft.
vim.api.nvim_set_current_win(vim.fn.win_findbuf(input.buf)[1])
H.keys('<Up>')
H.eq({ 'first question' }, vim.api.nvim_buf_get_lines(input.buf, 0, -1, false), '<Up>: the last prompt')
H.keys('<Down>')
H.eq({ 'an unfinished', 'second line' }, vim.api.nvim_buf_get_lines(input.buf, 0, -1, false), '<Down>: the draft')
-- <CR> in normal mode sends it, in the same conversation.
H.keys('<CR>')
local run = H.wait_run()
H.ok(not run.error, 'the run failed: ' .. tostring(run.error))
text = H.chat_text()
H.ok(text:find('## You\nan unfinished\nsecond line', 1, true), 'sent as typed, both lines:\n' .. text)
H.ok(text:find('Second answer, in the new Neovim.', 1, true), 'the answer:\n' .. text)
local now = require('zot.client').request_sync(st, 'zot/state')
H.eq(session, now.session_id, 'still the same session')
H.eq(4, now.message_count, 'the model got the whole conversation')
H.done()
