-- A conversation drawn from zot/messages (a resumed session) looks the
-- same as it did live: headers, the tool line with ✓ and its folded
-- result, the answers. Both come from the same events.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
H.write('notes.txt', 'one\ntwo\nthree\n')
vim.cmd('ZotPrompt what is in notes.txt?')
local run = H.wait_run()
vim.cmd('ZotPrompt and again?')
local second = H.wait_run(run)
local live = H.chat_text()
H.ok(live:find('✓ read notes.txt', 1, true), 'the live tool line:\n' .. live)
local st = H.state()
local msgs = require('zot.client').request_sync(st, 'zot/messages').messages
-- Emptied first, so what follows is the history's drawing, not the live one left over.
require('zot.chat').clear(st.root)
H.ok(not H.chat_text():find('notes.txt', 1, true), 'cleared:\n' .. H.chat_text())
require('zot.chat').render_messages(st.root, msgs)
local replayed = H.chat_text()
H.eq(live, replayed, 'the resumed conversation is drawn as it was live')
local chat = H.chat()
local result_row
for i, l in ipairs(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)) do
  if not result_row and l:find('  │ ', 1, true) == 1 then
    result_row = i
  end
end
H.ok(result_row, 'the tool result lines:\n' .. replayed)
vim.api.nvim_win_call(vim.fn.win_findbuf(chat.buf)[1], function()
  H.ok(vim.fn.foldclosed(result_row) ~= -1, 'the tool result is folded, as it was live')
end)
-- And a live run after it still gets its own header.
vim.cmd('ZotPrompt third')
H.wait_run(second)
local _, n = H.chat_text():gsub('## zot\n', '')
H.eq(3, n, 'three answers, three headers:\n' .. H.chat_text())
H.done()
