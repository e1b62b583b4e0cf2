-- lint-on-write (a tool_result hook): after the model writes a Go file
-- with a syntax error, gofmt's findings are appended to the write's
-- result: the chat's tool card shows them, and the model's next request
-- (the scripted model's request log) carries them.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
if vim.fn.executable('gofmt') == 0 then
  error('gofmt is needed: lint-on-write checks Go files with it')
end
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_LINT') } })
require('zot.client').with_root(H.ws, function() end)
H.wait_ready()
H.wait_extension('lint-on-write')
vim.cmd('ZotPrompt write bad.go')
local run = H.wait_run()
H.ok(not run.error, 'run error')
H.ok(vim.fn.filereadable(H.ws .. '/bad.go') == 1, 'the file was written')
local text = H.chat_text()
H.ok(text:find('lint-on-write found problems in bad.go', 1, true), 'the findings in the chat:\n' .. text)
local lines = {}
for _, r in ipairs(H.model_requests()) do
  lines[#lines + 1] = vim.json.encode(r.body)
end
H.eq(2, #lines, 'model requests')
H.ok(not lines[1]:find('lint-on-write found', 1, true), 'nothing before the write')
H.ok(lines[2]:find('lint-on-write found problems in bad.go', 1, true), 'the model got the findings: ' .. lines[2])
H.ok(lines[2]:find('expected', 1, true), "gofmt's message reached the model: " .. lines[2])
H.done()
