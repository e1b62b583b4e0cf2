-- An extension's fork and navigate_tree actions (hookext's /hookext-tree)
-- reach the chat as zot/session/changed: the chat draws the conversation
-- it is in now, with a note; a navigation back to a prompt puts that
-- prompt in the input, as pi does; its new_session is a new session.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_HOOKEXT') } })
local zot = require('zot')
local chat = require('zot.chat')
H.write('a.txt', 'a\n')
vim.cmd('edit ' .. vim.fn.fnameescape(H.ws .. '/a.txt'))
vim.cmd('ZotPrompt first')
H.wait_run()
H.wait_extension('hookext')
H.ok(H.chat_text():find('Answer about the first.', 1, true), 'the answer:\n' .. H.chat_text())

-- A fork (the first one refused by hookext, the second made), then back.
-- A marker shows the chat was drawn again.
chat.note(H.ws, 'MARKER-BEFORE')
zot.command('hookext-tree', '', { root = H.ws })
H.wait('the navigation back drawn', function()
  return H.chat_text():find('An extension moved the conversation in the session tree', 1, true) ~= nil
end)
local text = H.chat_text()
H.ok(not text:find('MARKER-BEFORE', 1, true), 'the chat was drawn again:\n' .. text)
H.ok(text:find('Answer about the first.', 1, true), 'back in the first session, its conversation:\n' .. text)

-- Back to the first prompt: a new branch before it; the prompt goes to
-- the input.
zot.command('hookext-tree', 'prompt', { root = H.ws })
H.wait('the navigation to the prompt drawn', function()
  local t = H.chat_text()
  return t:find('0 messages', 1, true) ~= nil and not t:find('Answer about the first.', 1, true)
end)
local inp = require('zot.input').get(H.ws)
H.wait('the prompt in the input', function()
  return require('zot.input').text(inp):find('first', 1, true) ~= nil
end)

-- An extension's new_session (pi's ctx.newSession): the chat says so and
-- draws the empty session.
chat.note(H.ws, 'MARKER-NEW')
zot.command('hookext-tree', 'new', { root = H.ws })
H.wait('the new session drawn', function()
  local t = H.chat_text()
  return t:find('An extension started a new session', 1, true) ~= nil and not t:find('MARKER-NEW', 1, true)
end)
H.done()
