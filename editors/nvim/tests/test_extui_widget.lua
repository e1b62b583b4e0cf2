-- An extension's widget (zot/ui/widget) is drawn as virtual lines at the
-- bottom of the chat buffer (below its last line, where the prompt is
-- typed), follows the text as it grows, and goes away when the extension
-- stops (/reload-ext) or dies. An extension that asks (zot/ui/request) and
-- then crashes: its dialog closes and the run goes on.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_CAPEXT') } })
local chat = require('zot.chat')

-- 1. capext's widget tool: set_widget w {"line 1", "line 2"}.
vim.cmd('ZotPrompt show the widget')
local run = H.wait_run()
H.ok(not run.error, 'run error')
H.wait('the widget in the chat', function()
  return #chat.widgets_shown(H.ws) == 2
end)
local shown, row = chat.widgets_shown(H.ws)
H.eq({ 'line 1', 'line 2' }, shown, 'the virtual lines')
H.eq({ 'line 1', 'line 2' }, require('zot').widget_lines(), 'widget_lines()')
H.wait('the run text', function()
  return H.chat_text():find('Widget shown.', 1, true) ~= nil
end)
shown, row = chat.widgets_shown(H.ws)
H.eq(vim.api.nvim_buf_line_count(H.chat().buf) - 1, row, 'below the last line, after the text grew')
H.ok(not H.chat_text():find('line 1', 1, true), 'virtual, not in the text')

-- 2. The extension stops (reloaded): its widget goes with it.
local before = H.wait_extension('capext').pid
vim.cmd('ZotCommand /reload-ext')
H.wait('the widget gone after the reload', function()
  return #chat.widgets_shown(H.ws) == 0 and #require('zot').widget_lines() == 0
end)

-- 3. ask_then_crash: the question opens (zot's float, as with the builtin
-- vim.ui.select) and closes when the extension dies; the run goes on.
H.wait('capext restarted by the reload', function()
  local e = H.wait_extension('capext')
  return e.pid and e.pid ~= before
end)
local extui = require('zot.extui')
local pick, dialogs = extui.pick, {}
extui.pick = function(...)
  local win, close = pick(...)
  dialogs[#dialogs + 1] = win
  return win, close
end
vim.cmd('ZotPrompt crash')
run = H.wait_run(run)
H.ok(not run.error, 'run error')
H.wait('the answer after the crash', function()
  return H.chat_text():find('Went on after the crash.', 1, true) ~= nil
end)
if os.getenv('ZOT_TEST_TRANSPORT') ~= 'builtin' then
  H.eq(1, #dialogs, 'the question was shown')
  H.wait("the dead extension's question to close", function()
    return not vim.api.nvim_win_is_valid(dialogs[1])
  end)
end
H.done()
