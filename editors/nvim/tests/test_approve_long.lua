-- permission "ask": a command taller than the screen is never asked about
-- with a cut-off prompt. The choices are "Show full command" and "Deny";
-- "Show full command" moves into a float holding every line of it, and
-- <CR> there asks with all the choices.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ permission = 'ask' })
local asked = {}
local pending
vim.ui.select = function(items, opts, on_choice)
  asked[#asked + 1] = { items = items, prompt = opts.prompt }
  pending = { items = items, cb = on_choice }
end
local function choose(title)
  H.wait('the approval prompt', function()
    return pending ~= nil
  end)
  local p = pending
  pending = nil
  for i, t in ipairs(p.items) do
    if t == title then
      p.cb(t, i)
      return
    end
  end
  error('no choice ' .. title .. ' in ' .. vim.inspect(p.items))
end

vim.cmd('ZotPrompt run the long command')
H.wait('the approval prompt', function()
  return pending ~= nil
end)
H.eq({ 'Show full command', 'Deny' }, pending.items, 'a command too tall for the screen')
H.ok(not asked[1].prompt:find('hidden%-payload'), 'the cut-off prompt is not the question')
choose('Show full command')
H.ok(vim.b.zot_approval, 'the cursor is in the approval float')
local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
H.eq('zot wants to run a command:', lines[1], 'first line')
H.eq('echo harmless-start', lines[3], 'the command starts')
H.eq('# padding 60', lines[#lines - 1], 'every padding line')
H.eq('echo hidden-payload', lines[#lines], 'the float shows the last line')
H.eq(64, #lines, 'all lines of the message')
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
H.wait('the full choices', function()
  return pending ~= nil
end)
H.eq({ 'Deny', 'Allow once', 'Always allow for this session' }, pending.items, 'after reading it (the safe one first)')
choose('Deny')
local run = H.wait_run()
H.ok(not run.error, 'run error')
local text = H.chat_text()
H.ok(text:find('✗ bash', 1, true), 'denied:\n' .. text)
H.ok(text:find('All done.', 1, true), 'the run went on')
H.done()
