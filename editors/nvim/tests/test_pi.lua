-- A pi extension (extensions/testdata/piext/editors.ts, pi's API
-- unmodified, run by zot's pi runtime) in Neovim: its permission-gate
-- style question is a vim.ui.select carrying its text (Yes → the command
-- runs; No → blocked, the model is told), /pistatus puts its status in
-- require("zot").statusline() and its widget in the chat, its
-- registerShortcut runs from :ZotShortcut and <Plug>(zot-shortcut-KEY),
-- and setup({ pi_flags }) reaches its getFlag.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
vim.fn.mkdir(H.ws .. '/gone', 'p')
vim.fn.mkdir(H.ws .. '/kept', 'p')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_PIEXT') }, pi_flags = { greeting = 'from nvim' } })
local asked = {}
vim.ui.select = function(items, opts, on_choice)
  asked[#asked + 1] = { items = items, prompt = opts.prompt }
  local want = opts.prompt:find('rm -rf kept', 1, true) and 'No' or 'Yes'
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

-- 1. The dialog.
vim.cmd('ZotPrompt clean up')
local run = H.wait_run()
H.ok(not run.error, 'run error')
H.eq(2, #asked, 'two questions')
H.ok(
  asked[1].prompt:find('[editors]', 1, true)
    and asked[1].prompt:find('Dangerous command:', 1, true)
    and asked[1].prompt:find('rm -rf gone', 1, true),
  'the question carries the extension and its text: ' .. asked[1].prompt
)
H.eq({ 'Yes', 'No' }, asked[1].items, "the extension's choices")
H.ok(vim.fn.isdirectory(H.ws .. '/gone') == 0, 'the allowed command ran')
H.ok(vim.fn.isdirectory(H.ws .. '/kept') == 1, 'the blocked command did not run')
local text = H.chat_text()
H.ok(text:find('removed-it', 1, true), 'allowed output:\n' .. text)
H.ok(text:find('Blocked by user', 1, true), 'the model was told:\n' .. text)

-- 2. A status and a widget.
local chat = require('zot.chat')
vim.cmd('ZotCommand /pistatus')
H.wait('the status in the statusline', function()
  return require('zot').statusline():find('pi: on', 1, true) ~= nil
end)
H.wait('the widget in the chat', function()
  return #chat.widgets_shown(H.ws) == 2
end)
H.eq({ 'pi line 1', 'pi line 2' }, (chat.widgets_shown(H.ws)), 'the widget lines')

-- 3. The shortcut: by its key (another spelling), then by its <Plug>.
vim.cmd('ZotShortcut Shift-Ctrl-Y')
H.wait('the shortcut ran (status)', function()
  return require('zot').statusline():find('shortcut ran 1', 1, true) ~= nil
end)
local plug = '<Plug>(zot-shortcut-ctrl+shift+y)'
H.ok(vim.fn.maparg(plug, 'n') ~= '', plug .. ' is defined')
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(plug, true, false, true), 'mx', false)
H.wait('the shortcut ran again from its <Plug> mapping', function()
  return require('zot').statusline():find('shortcut ran 2', 1, true) ~= nil
end)

-- 4. The flag from setup({ pi_flags }).
vim.cmd('ZotCommand /piflag')
H.wait("the flag's value in the status", function()
  return require('zot').statusline():find('flag: from nvim', 1, true) ~= nil
end)
H.done()
