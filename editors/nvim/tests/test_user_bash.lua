-- `!cmd` in the chat runs the user's own shell command (zot/userBash): a
-- card with its output; the model sees it on the next prompt. `!!cmd`
-- runs the same but stays out of the conversation.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()

vim.cmd('ZotPrompt !echo nvim-shell; exit 3')
local run = H.wait_run()
local text = H.chat_text()
H.ok(text:find('✗ ! echo nvim-shell; exit 3 — nvim-shell', 1, true), 'the card with its output:\n' .. text)
H.ok(text:find('exit code 3', 1, true), 'the exit code on the card:\n' .. text)

vim.cmd('ZotPrompt !!echo nvim-private')
run = H.wait_run(run)
text = H.chat_text()
H.ok(text:find('✓ !! echo nvim-private — nvim-private', 1, true), 'the !! card:\n' .. text)

vim.cmd('ZotPrompt what did it print?')
H.wait_run(run)
local body = vim.json.encode(H.model_requests()[1].body)
H.ok(body:find('nvim-shell', 1, true), 'the model saw the ! command:\n' .. body)
H.ok(not body:find('nvim-private', 1, true), 'the model saw the !! command:\n' .. body)
H.done()
