-- A prompt sent while an answer streams is queued: the bar says so, and
-- nothing is written into the streaming answer (it stays one run of
-- words). A failed model call is reported once.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local chat_mod = require('zot.chat')

vim.cmd('ZotPrompt stream a lot')
local chat
H.wait('the answer streaming', function()
  chat = H.chat()
  return chat and chat.deltas > 5
end)
vim.cmd('ZotPrompt and then this')
H.wait('the queued run in the bar', function()
  return chat_mod.bar_text(chat):find('1 queued', 1, true) ~= nil
end)
H.wait('both runs done', function()
  local n = 0
  for _, r in pairs(chat.runs) do
    n = n + (r.done and 1 or 0)
  end
  return n == 2
end)
local text = H.chat_text()
H.ok(text:find(('word '):rep(299) .. 'word', 1, true), 'the streamed answer is unbroken:\n' .. text)
H.ok(not text:lower():find('queued', 1, true), 'no queue notice in the transcript:\n' .. text)
H.ok(
  text:find('## You\nand then this', 1, true) and text:find('Second answer.', 1, true),
  'the queued run ran:\n' .. text
)
H.ok(not chat_mod.bar_text(chat):find('queued', 1, true), 'the bar no longer says queued: ' .. chat_mod.bar_text(chat))

local before = chat.last_run
vim.cmd('ZotPrompt fail please')
local run = H.wait_run(before)
H.ok(run.error or run.stop == 'error', 'the run failed')
text = H.chat_text()
local _, n = text:gsub('%*%*error:%*%*', '')
H.eq(1, n, 'the error is shown once:\n' .. text)
H.ok(text:find('model says no', 1, true), 'with its message:\n' .. text)
H.done()
