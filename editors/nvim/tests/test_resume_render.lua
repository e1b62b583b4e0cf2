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
require('zot.chat').render_messages(st.root, msgs)
local replayed = H.chat_text()
H.eq(live, replayed, 'the resumed conversation is drawn as it was live')
-- And a live run after it still gets its own header.
vim.cmd('ZotPrompt third')
H.wait_run(second)
local _, n = H.chat_text():gsub('## zot\n', '')
H.eq(3, n, 'three answers, three headers:\n' .. H.chat_text())
H.done()
