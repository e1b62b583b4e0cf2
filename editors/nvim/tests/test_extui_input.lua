-- An extension's input question in Neovim's builtin vim.ui.input (an
-- input() prompt, which blocks) is left when zot cancels it: capext's
-- ask_timeout asks with timeout_ms 100, zot sends $/cancelRequest, the
-- prompt is left as <Esc> leaves it, and the run goes on.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
if os.getenv('ZOT_TEST_TRANSPORT') == 'builtin' then
  -- Neovim's transport does not tell handlers the request id: the prompt
  -- cannot be matched to the $/cancelRequest (|zot-extension-ui|).
  H.done()
  return
end
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_CAPEXT') } })
local seen = {}
local input = vim.fn.input
-- Watches the builtin vim.ui.input's input() (vim.ui.input stays Neovim's).
vim.fn.input = function(opts)
  seen[#seen + 1] = 'asked: ' .. (type(opts) == 'table' and tostring(opts.prompt) or tostring(opts))
  local r = input(opts)
  seen[#seen + 1] = 'left'
  return r
end

vim.cmd('ZotPrompt ask me')
local run = H.wait_run()
H.ok(not run.error, 'run error')
H.ok(seen[1] and seen[1]:find('[capext] name?', 1, true), 'the prompt: ' .. vim.inspect(seen))
H.eq('left', seen[2], 'the prompt was left')
H.ok(vim.api.nvim_get_mode().mode ~= 'c', 'not in the command line')
local text = H.chat_text()
H.ok(text:find('ask_timeout', 1, true) and text:find('Asked.', 1, true), 'the run went on:\n' .. text)
H.done()
