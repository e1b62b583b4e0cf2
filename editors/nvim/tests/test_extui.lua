-- Extensions ask through zot/ui/request and show status through
-- zot/ui/status: permission-gate's question is a vim.ui.select (allow →
-- the command runs; deny → the model is told), plan-mode's "plan" is in
-- require("zot").statusline() and in the chat window's bar (its winbar;
-- its statusline before Neovim 0.8).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
vim.fn.mkdir(H.ws .. '/gone', 'p')
vim.fn.mkdir(H.ws .. '/kept', 'p')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_GATE'), '--ext', os.getenv('ZOT_TEST_PLAN') } })
local asked = {}
vim.ui.select = function(items, opts, on_choice)
  asked[#asked + 1] = { items = items, prompt = opts.prompt }
  local want = opts.prompt:find('rm -rf kept', 1, true) and 'Deny' or 'Allow once'
  for i, t in ipairs(items) do
    if t == want then
      vim.schedule(function()
        on_choice(t, i)
      end)
      return
    end
  end
  vim.schedule(function()
    on_choice(nil, nil)
  end)
end

vim.cmd('ZotPrompt clean up')
local run = H.wait_run()
H.ok(not run.error, 'run error')
H.eq(2, #asked, 'two questions')
H.ok(
  asked[1].prompt:find('[permission-gate]', 1, true) and asked[1].prompt:find('rm -rf gone', 1, true),
  'the question: ' .. asked[1].prompt
)
H.eq({ 'Deny', 'Allow once', 'Always allow this command' }, asked[1].items, 'choices (the safe one first)')
H.ok(vim.fn.isdirectory(H.ws .. '/gone') == 0, 'the allowed command ran')
H.ok(vim.fn.isdirectory(H.ws .. '/kept') == 1, 'the denied command did not run')
local text = H.chat_text()
H.ok(text:find('removed-it', 1, true), 'allowed output:\n' .. text)
H.ok(text:find('the user denied running: rm -rf kept', 1, true), 'the model was told:\n' .. text)

H.wait_extension('plan-mode')
local bar = require('zot.compat').has_winbar and 'winbar' or 'statusline'
local function chat_bar()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == H.chat().buf then
      return vim.wo[w][bar]
    end
  end
  error('the chat is not shown')
end
vim.cmd('ZotCommand /plan')
H.wait('plan in the statusline', function()
  return require('zot').statusline():find('plan', 1, true) ~= nil
end)
H.wait("plan in the chat window's " .. bar, function()
  return chat_bar():find('· plan', 1, true) ~= nil
end)
vim.cmd('ZotCommand /plan')
H.wait('plan gone from the statusline', function()
  local s = require('zot').statusline()
  return s ~= '' and s:find('plan', 1, true) == nil
end)
H.wait("plan gone from the chat window's " .. bar, function()
  local s = chat_bar()
  return s:find('zot', 1, true) ~= nil and s:find('plan', 1, true) == nil
end)
H.done()
