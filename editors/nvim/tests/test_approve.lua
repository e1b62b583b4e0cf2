-- permission "ask": a bash command needs approval (window/showMessageRequest
-- through vim.ui.select, without blocking the editor): allow, then deny.
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
      -- zot waits for the answer (the run goes on only after it).
      H.ok(not H.chat().last_run.done, 'the run waits for the answer')
      p.cb(t, i)
      return
    end
  end
  error('no choice ' .. title .. ' in ' .. vim.inspect(p.items))
end

vim.cmd('ZotPrompt run the commands')
choose('Allow once')
choose('Deny')
local run = H.wait_run()
H.ok(not run.error, 'run error')
H.ok(asked[1].prompt:find('echo approved%-run'), 'the prompt shows the command: ' .. asked[1].prompt)
local text = H.chat_text()
H.ok(text:find('✓ bash echo approved-run', 1, true), 'allowed:\n' .. text)
H.ok(text:find('  │ approved-run', 1, true), 'its output:\n' .. text)
H.ok(text:find('✗ bash echo denied-run', 1, true), 'denied:\n' .. text)
H.ok(text:find('All done.', 1, true), 'the run went on')
H.done()
