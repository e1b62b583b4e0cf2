-- Several chats (:ZotChatNew): a second chat of the workspace has a zot of
-- its own, whose prompt is answered while the first chat's run goes on;
-- each keeps its own permission mode; the first run stops on its own;
-- :ZotChatClose stops the second zot and keeps its session.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local zot = require('zot')
local chat = require('zot.chat')
local client = require('zot.client')

local function text(key)
  local c = chat.get(key, false)
  return c and table.concat(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false), '\n') or ''
end

H.write('a.txt', 'a\n')
vim.cmd('edit ' .. vim.fn.fnameescape(H.ws .. '/a.txt'))
vim.cmd('ZotPrompt the long one')
H.wait("the first chat's bash running", function()
  return H.chat_text():find('sleep 60', 1, true) ~= nil
end)
local first = H.state()

vim.cmd('ZotChatNew')
local key = H.ws .. '#zot-chat-2'
H.wait("the second chat's zot", function()
  local st = client.get(key)
  return st and st.ready
end)
local second = client.get(key)
H.ok(second.id ~= first.id, 'a zot client of its own')
H.ok(
  vim.api.nvim_buf_get_name(chat.get(key, false).buf):find('#zot-chat-2', 1, true),
  'the chat buffer is named for it'
)
H.ok(not text(key):find('the long one', 1, true), "the first chat's conversation is not in it:\n" .. text(key))

zot.send(key, 'the quick one')
H.wait("the second chat's answer", function()
  return text(key):find('Quick answer from the second chat.', 1, true) ~= nil
end)
H.wait("the second chat's run over", function()
  local c = chat.get(key, false)
  return c.last_run and c.last_run.done
end)
H.ok(not H.chat().last_run.done, "the first chat's run is still in its bash")
H.ok(not H.chat_text():find('Quick answer', 1, true), "the first chat shows the second's answer:\n" .. H.chat_text())

-- Its own permission mode.
zot.set_mode('ask', { root = key })
H.wait("the second chat's mode ask", function()
  local st = client.request_sync(second, 'zot/state', nil, 5000)
  return st and st.permissionMode == 'ask'
end)
H.eq('auto', client.request_sync(first, 'zot/state', nil, 5000).permissionMode, "the first chat's mode")

-- The first run stops on its own.
zot.abort({ root = H.ws })
H.wait_run()

-- Closing the second chat stops its zot; its session stays on disk.
vim.api.nvim_set_current_buf(chat.get(key, false).buf)
vim.cmd('ZotChatClose')
H.wait('the second zot gone', function()
  return second.exited == true and client.get(key) == nil
end)
H.ok(chat.get(key, false) == nil, 'its chat buffer is gone')
local found = false
for _, f in ipairs(vim.fn.glob(os.getenv('ZOT_HOME') .. '/sessions/*/*.jsonl', false, true)) do
  local s = table.concat(vim.fn.readfile(f), '\n')
  if s:find('the quick one', 1, true) and s:find('Quick answer from the second chat.', 1, true) then
    found = true
  end
end
H.ok(found, "the second chat's session is on disk")
H.ok(client.get(H.ws) ~= nil, 'the first chat goes on')
H.done()
