-- Several tool calls in one answer: zot announces them all (tool_call)
-- before any runs. While the second one (bash) waits for its approval,
-- the chat's status names it ("running bash"), not the finished first
-- one, and each card gets its own result.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ permission = 'ask' })
local pending
vim.ui.select = function(items, opts, on_choice)
  pending = { items = items, cb = on_choice }
end

vim.cmd('ZotPrompt run both')
H.wait('the approval of bash', function()
  return pending ~= nil
end)
local chat = H.chat()
H.eq('running bash', chat.status, 'the status while bash is asked about')
H.ok(H.chat_text():find('✓ ls', 1, true), 'ls ran first:\n' .. H.chat_text())
for i, t in ipairs(pending.items) do
  if t == 'Allow once' then
    pending.cb(t, i)
  end
end
local run = H.wait_run()
H.ok(not run.error, 'run error')
local text = H.chat_text()
H.ok(text:find('✓ bash echo second-call', 1, true), 'bash ran:\n' .. text)
H.ok(text:find('Both ran.', 1, true), 'the answer:\n' .. text)
H.done()
