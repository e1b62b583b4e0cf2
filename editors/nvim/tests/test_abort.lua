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
local aborted = H.chat_text()
H.ok(aborted:find('_(aborted)_', 1, true), 'the chat says so')

-- No waiting to prove nothing came: the next run is the barrier. zot sends
-- one ordered stream, so a late delta of the aborted run would arrive
-- before the next run's end, and would show between the aborted run's text
-- and the next prompt.
vim.cmd('ZotPrompt again')
local run2 = H.wait_run(run)
H.ok(run2 ~= run and run2.stop == 'end_turn', 'the next run: ' .. vim.inspect(run2))
local text = H.chat_text()
H.ok(text:find('after the abort', 1, true), 'the next answer')
H.eq(aborted, text:sub(1, #aborted), "the aborted run's text, unchanged")
local rest = text:sub(#aborted + 1)
H.ok(rest:find('^%s*## You%s+again'), 'the next thing in the chat is the next prompt: ' .. rest:sub(1, 200))
H.ok(not rest:find('tok ', 1, true), 'no delta of the aborted run after its end')
H.done()
