-- Neovim's built-in LSP client, no zot plugin: a code action's run shows
-- as work-done progress ($/progress begin … end); cancelling it in the
-- editor (window/workDoneProgress/cancel) aborts the run; a long answer
-- is a markdown transcript that window/showDocument opens.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.write('calc.py', 'def add(a, b):\n    return a + b\n')
H.start('calc.py')

-- The model hangs: only the cancel can end this run.
H.run_action('zot: explain')
local token
H.wait('the progress to begin', function()
  for _, p in ipairs(H.progress) do
    if p.kind == 'begin' then
      token = p.token
      return true
    end
  end
end)
H.wait('the model to be asked', function()
  return #H.model_requests() == 1
end)
H.notify('window/workDoneProgress/cancel', { token = token })
H.wait('the progress to end', function()
  for _, p in ipairs(H.progress) do
    if p.token == token and p.kind == 'end' then
      return p.message == 'aborted'
    end
  end
end)
H.wait('the aborted message', function()
  return H.message_with('zot: explain: aborted') ~= nil
end)

-- The next run goes: its long answer opens as a document.
local src = vim.api.nvim_get_current_buf()
H.run_action('zot: explain')
H.wait('the transcript to open', function()
  return vim.api.nvim_buf_get_name(0):find('/transcripts/.*%.md$') ~= nil
end)
local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
H.ok(text:find('# zot: explain', 1, true) and text:find('This function adds its two arguments.', 1, true), 'the transcript:\n' .. text)
H.ok(src ~= vim.api.nvim_get_current_buf(), 'the transcript is its own buffer')
H.done()
