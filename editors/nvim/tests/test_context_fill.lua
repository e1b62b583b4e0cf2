-- The chat's bar shows how full the model's context window is beside the
-- cost: what the last model call read, of the model's window (zot/models).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
vim.cmd('ZotPrompt hello')
local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))
H.wait('the fill in the bar', function()
  return (H.chat().bar or ''):find('ctx ', 1, true) ~= nil
end)
local bar = H.chat().bar
H.ok(bar:find('ctx [<%d]+%% of %d+%.?%d*k'), 'the fill: ' .. bar)
H.ok(
  bar:find('↑', 1, true) and bar:find('ctx', 1, true) > bar:find('↑', 1, true),
  'beside the tokens and cost: ' .. bar
)
H.done()
