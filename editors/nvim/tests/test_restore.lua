-- Nothing lost: closing and reopening the chat shows the conversation
-- scrolled to the end with the input's draft; a new Neovim on the same
-- workspace (restore_second.lua, a real second `nvim --headless`) shows
-- the last conversation, not an empty session, and the model gets it.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local file = H.write('notes.txt', 'alpha\n')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
vim.cmd('ZotPrompt first question')
local run = H.wait_run()
H.ok(not run.error, 'the run failed: ' .. tostring(run.error))
local chat = H.chat()
local st = H.state()
H.wait('the session remembered', function()
  return require('zot.store').get(H.ws).session ~= nil
end)
local session = require('zot.store').get(H.ws).session
H.eq(st.session_id, session, 'the remembered session is the current one')

-- A draft in the input; close the chat, reopen it.
vim.cmd('ZotChat')
H.eq(0, #vim.fn.win_findbuf(chat.buf), 'closed')
vim.cmd('ZotChat')
local input = require('zot.input').get(H.ws, false)
H.eq(input.buf, vim.api.nvim_get_current_buf(), 'the input has the focus')
-- The chat scrolled away from its end when it is closed, and a line added
-- while it is hidden: reopening shows the end, that line.
vim.api.nvim_win_set_cursor(vim.fn.win_findbuf(chat.buf)[1], { 1, 0 })
H.keys('ian unfinished<CR>second line<Esc>')
vim.cmd('ZotChat')
H.eq(0, #vim.fn.win_findbuf(input.buf), 'closed again')
require('zot.chat').note(H.ws, 'while hidden')
vim.cmd('ZotChat')
local cwin = vim.fn.win_findbuf(chat.buf)[1]
H.eq(vim.api.nvim_buf_line_count(chat.buf), vim.api.nvim_win_get_cursor(cwin)[1], 'the chat is at its end')
H.eq('> while hidden', vim.trim(H.chat_text()):match('[^\n]*$'), 'the line added while hidden is the last one')
H.ok(H.chat_text():find('First answer, about the restore.', 1, true), 'the conversation is there:\n' .. H.chat_text())
H.eq({ 'an unfinished', 'second line' }, vim.api.nvim_buf_get_lines(input.buf, 0, -1, false), 'the draft survived')

-- A new Neovim on the same workspace, once this one's zot is gone (a
-- session is written by one zot at a time).
H.ok(require('zot.client').stop_all(), 'zot stopped')
local second = H.dir .. '/restore_second.lua'
-- $NVIM as run.sh was given it (a wrapper script for the unpacked
-- versions, where v:progpath is the dynamic loader).
local nvim = os.getenv('ZOT_TEST_NVIM') or ''
nvim = vim.fn.exepath(nvim) ~= '' and vim.fn.exepath(nvim) or vim.v.progpath
local out = vim.fn.system({
  nvim,
  '--headless',
  '-u',
  'NONE',
  '-i',
  'NONE',
  '-n',
  '-c',
  "lua local ok,e=pcall(dofile,'"
    .. second
    .. "'); if not ok then io.stderr:write(tostring(e)..'\\n'); vim.cmd('cquit 1') end",
})
H.eq(0, vim.v.shell_error, 'the second Neovim passed:\n' .. out)
H.ok(out:find('PASS', 1, true), 'the second Neovim ran its checks:\n' .. out)
H.done()
