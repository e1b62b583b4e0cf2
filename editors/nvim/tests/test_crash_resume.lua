-- zot crashes: the next prompt restarts it resuming the same session (the
-- model gets the conversation), the chat says so, and the new answer has
-- its own "## zot" header although the new process numbers runs from 1.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local client = require('zot.client')
vim.cmd('ZotPrompt first question')
local first = H.wait_run()
local st = H.state()
H.wait('the session id', function()
  return st.session_id ~= nil
end)
local session = st.session_id
local pid = st.pid
H.ok(pid, 'the zot pid')
vim.loop.kill(pid, 'sigkill')
H.wait('zot gone', function()
  return st.exited
end)
H.ok(H.chat_text():find('resumes this session', 1, true), 'the exit note says what happens next:\n' .. H.chat_text())

vim.cmd('ZotPrompt second question')
local second = H.wait_run(first)
H.ok(not second.error, 'the second run failed: ' .. tostring(second.error))
local st2 = H.state()
H.ok(st2 ~= st and st2.pid ~= pid, 'a new zot')
local now = client.request_sync(st2, 'zot/state')
H.eq(session, now.session_id, 'the same session')
H.ok(now.message_count >= 4, 'the conversation continued: ' .. tostring(now.message_count) .. ' messages')
local text = H.chat_text()
H.ok(text:find('resumed session ' .. session, 1, true), 'the chat says it resumed:\n' .. text)
local _, headers = text:gsub('## zot\n', '')
H.eq(2, headers, 'each answer has its header:\n' .. text)
H.ok(text:find('## zot\nSecond answer, after the restart.', 1, true), 'the second answer under its header:\n' .. text)
H.done()
