-- A redacting extension (an assistant_message intercept replacing
-- SECRET-4242): the chat buffer shows only the rewritten answer — no
-- secret, no prefix of it streamed before the answer was judged — for the
-- first prompt (sent while the extension may still start) and for an
-- answer after a tool call; :ZotLog (zot's stderr, the extension logs)
-- does not show the answer's original text either.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_REDACTOR') } })
require('zot.client').with_root(H.ws, function() end)
H.wait_ready()
vim.cmd('ZotPrompt what is the key?')
local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))
local text = H.chat_text()
H.ok(text:find('The key is [redacted], keep it.', 1, true), 'the rewritten answer:\n' .. text)
H.ok(not text:find('SEC', 1, true), 'the chat shows the secret:\n' .. text)

vim.cmd('ZotPrompt list, then tell me again')
local run2 = H.wait_run(run)
H.ok(not run2.error, 'run error: ' .. tostring(run2.error))
text = H.chat_text()
local n = select(2, text:gsub('The key is %[redacted%], keep it%.', ''))
H.eq(2, n, 'the rewritten answer, twice:\n' .. text)
H.ok(not text:find('SEC', 1, true), 'the chat shows the secret:\n' .. text)

vim.cmd('ZotLog')
local log = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
H.ok(log:find('# zot lsp (stderr)', 1, true), 'the log buffer:\n' .. log)
-- (The extension's own command line, logged at its start, names what it
-- replaces; the answer's text must not be there.)
H.ok(not log:find('key is SEC', 1, true), 'the log shows the answer with the secret:\n' .. log)
H.done()
