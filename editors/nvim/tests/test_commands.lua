-- :ZotModel, :ZotMode, :ZotCommand /help, :ZotNew and :ZotSessions (resume
-- through vim.ui.select), and completion of slash commands and their
-- arguments.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local got = H.capture_notify()
local picks = {}
vim.ui.select = function(items, opts, on_choice)
  local pick = table.remove(picks, 1)
  local i = pick and pick(items, opts) or nil
  on_choice(i and items[i] or nil, i)
end

vim.cmd('ZotPrompt first question')
local run = H.wait_run()
local st = H.state()
local session = require('zot.client').request_sync(st, 'zot/state').session_id
H.ok(session and session ~= '', 'a session id: ' .. vim.inspect(session))

-- :ZotModel picks another model.
local chosen
picks[#picks + 1] = function(items)
  for i, m in ipairs(items) do
    if m.id ~= st.info.model then
      chosen = m.id
      return i
    end
  end
end
vim.cmd('ZotModel')
H.wait('the model switch', function()
  return st.info.model == chosen
end)
H.ok(require('zot.chat').bar_text(H.chat()):find(chosen, 1, true), 'the model in the bar')
H.eq(chosen, require('zot.client').request_sync(st, 'zot/state').model, 'zot uses it')

-- :ZotMode readonly.
vim.cmd('ZotMode readonly')
H.wait('the mode', function()
  return st.info.permissionMode == 'readonly'
end)
H.eq('readonly', require('zot.client').request_sync(st, 'zot/state').permissionMode, 'zot mode')
H.eq({ 'readonly' }, require('zot.commands').complete_mode('re'), 'mode completion')
-- :ZotCommand completes a command's argument through zot/command/complete.
H.eq({ 'readonly' }, require('zot.commands').complete_command('r', 'ZotCommand /mode r', 0), 'argument completion')

-- A built-in slash command shows its output in the chat.
vim.cmd('ZotCommand /help')
H.wait('the help text', function()
  return H.chat_text():find('> /compact', 1, true) ~= nil
end)
H.ok(vim.tbl_contains(require('zot.commands').complete_prompt('/he', 'ZotPrompt /he', 0), '/help'), 'prompt completion')

-- :ZotNew empties the chat; :ZotSessions resumes the first session.
vim.cmd('ZotNew')
H.wait('the new session', function()
  return H.chat_text():find('New session', 1, true) ~= nil
end)
H.ok(not H.chat_text():find('first question', 1, true), 'the chat was cleared')
picks[#picks + 1] = function(items, opts)
  H.ok(opts.format_item(items[1]):find('messages', 1, true), 'session item: ' .. opts.format_item(items[1]))
  for i, s in ipairs(items) do
    if s.id == session then
      return i
    end
  end
end
vim.cmd('ZotSessions')
H.wait('the resumed conversation', function()
  local t = H.chat_text()
  return t:find('Resumed session', 1, true)
    and t:find('## You\nfirst question', 1, true)
    and t:find('answer one', 1, true)
end)
H.eq(session, require('zot.client').request_sync(st, 'zot/state').session_id, 'the session')
H.done()
