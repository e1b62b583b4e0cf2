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
-- The question can arrive before the chat has drawn ls's result (the
-- request is served at once, the events on the next tick): wait for the
-- status while the question is still open (it stays open until answered
-- below, so a status that never names bash fails here).
H.wait('the status "running bash" while bash is asked about', function()
  return H.chat().status == 'running bash'
end)
H.ok(pending ~= nil and H.chat_text():find('✓ ls', 1, true), 'ls ran first:\n' .. H.chat_text())
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
