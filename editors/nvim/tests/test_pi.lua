-- A pi extension (extensions/testdata/piext/editors.ts, pi's API
-- unmodified, run by zot's pi runtime) in Neovim: its permission-gate
-- style question is a vim.ui.select carrying its text (Yes → the command
-- runs; No → blocked, the model is told), /pistatus puts its status in
-- require("zot").statusline() and its widget in the chat, its
-- registerShortcut runs from :ZotShortcut and <Plug>(zot-shortcut-KEY),
-- setup({ pi_flags }) reaches its getFlag, /pidraft reads the chat's input
-- and sets and pastes into it, and /pieditor's ui.editor is a scratch
-- buffer in a float (:w answers it, q cancels).
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

-- 1. The dialog. The prompt waits for the extension only so long (then
-- goes on without it, as a user's would): on a loaded machine a Node
-- start can take longer, and this test is about the extension.
require('zot.client').with_root(H.ws, function() end)
H.wait_ready()
H.wait_extension('editors')
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

-- 5. The chat's input: what the user typed is read; set, then pasted.
local input = require('zot.input')
input.set_text(input.get(H.ws), 'typed in nvim')
vim.cmd('ZotCommand /pidraft')
H.wait('the input the command read', function()
  return require('zot').statusline():find('input was: typed in nvim', 1, true) ~= nil
end)
H.wait("the extension's text in the chat's input", function()
  return input.text(input.get(H.ws)) == 'pi draft + pasted'
end)

-- 6. ui.editor: a float with the prefill; :w answers the text, q cancels.
local function editor_buf()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(b) and vim.api.nvim_buf_get_name(b):find('zot://editor/', 1, true) then
      return b
    end
  end
end
vim.cmd('ZotCommand /pieditor')
H.wait('the editor float', function()
  return editor_buf() ~= nil
end)
local buf = editor_buf()
H.eq({ 'line 1', 'line 2' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the prefill')
H.ok(vim.api.nvim_win_get_config(vim.api.nvim_get_current_win()).relative ~= '', 'the float has the focus')
vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'line 3' })
vim.cmd('write')
H.wait("the editor's text in the status", function()
  return require('zot').statusline():find('editor: line 1 | line 2 | line 3', 1, true) ~= nil
end)
H.wait('the float closed', function()
  return editor_buf() == nil
end)
vim.cmd('ZotCommand /pieditor')
H.wait('the editor float again', function()
  return editor_buf() ~= nil
end)
vim.api.nvim_feedkeys('q', 'mx', false)
H.wait('the cancelled editor in the status', function()
  return require('zot').statusline():find('editor: cancelled', 1, true) ~= nil
end)
H.done()
