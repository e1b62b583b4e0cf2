-- :ZotAbort stops a long stream: the run ends as aborted and no more text
-- arrives; the next prompt works.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()

vim.cmd('ZotPrompt write forever')
H.wait('the stream to start', function()
  local c = H.chat()
  return c and c.deltas > 50
end)
local run = H.chat().last_run
vim.cmd('ZotAbort')
H.wait('the aborted run to end', function()
  return run.done
end)
H.eq('aborted', run.stop, 'stop reason')
local n = H.chat().deltas
H.ok(n < 100000, 'the stream was cut short: ' .. n)
H.ok(H.chat_text():find('_(aborted)_', 1, true), 'the chat says so')
vim.wait(300, function()
  return false
end)
H.eq(n, H.chat().deltas, 'no deltas after the end')

vim.cmd('ZotPrompt again')
local run2 = H.wait_run(run)
H.ok(run2 ~= run and run2.stop == 'end_turn', 'the next run: ' .. vim.inspect(run2))
H.ok(H.chat_text():find('after the abort', 1, true), 'the next answer')
H.done()
