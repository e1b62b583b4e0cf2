-- :ZotMcp lists the MCP servers (the Go SDK fake, from --mcp-config) with
-- their state and tools; :ZotMcp restart NAME restarts one (a new pid);
-- :checkhealth zot reports them; the server is gone once nvim exits.
-- Its resources attach as chat context: #mcp:<server>:<uri> in the input
-- (completed from zot/mcp/resources) reaches the model as a block.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local fake = os.getenv('ZOT_TEST_FAKEMCP') or ''
H.ok(vim.fn.executable(fake) == 1, 'the fake MCP server was built: ' .. fake)
local cfg = H.tmp .. '/mcp.json'
local f = assert(io.open(cfg, 'w'))
f:write(vim.json.encode({ mcpServers = { fake = { command = fake } } }))
f:close()
H.setup({ args = { '--mcp-config', cfg } })
local got = H.capture_notify()
require('zot.client').with_root(H.ws, function() end)
H.wait_ready()
local st = H.state()
local P = require('zot.protocol')

local function server()
  local res = require('zot.client').request_sync(st, P.request.mcp, nil, 5000) or {}
  for _, s in ipairs(res.servers or {}) do
    if s.name == 'fake' then
      return s
    end
  end
end
H.wait('the MCP server to be ready', function()
  local s = server()
  return s and s.state == 'ready'
end)
local pid = server().pid

vim.cmd('ZotMcp')
H.wait('the MCP float', function()
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  return text:find('fake%s+flag%s+stdio%s+ready%s+4 tools') ~= nil and text:find('mcp__fake__write', 1, true) ~= nil
end)
vim.cmd('normal q')
H.eq({ 'restart' }, require('zot.commands').complete_mcp('re', 'ZotMcp re'), 'completion')

vim.cmd('ZotMcp restart fake')
H.wait('the restart', function()
  for _, n in ipairs(got) do
    if n.msg:find('MCP server fake: ready', 1, true) then
      return true
    end
  end
  return false
end)
local s = server()
H.ok(s.pid ~= pid and s.pid > 0, 'a new process: ' .. tostring(s.pid) .. ' after ' .. tostring(pid))

vim.cmd('checkhealth zot')
local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
vim.cmd('bwipeout!')
H.ok(
  text:find('zot: MCP servers', 1, true) and text:find('OK[^\n]-fake %(flag, stdio%): ready, 4 tools'),
  'health:\n' .. text
)

-- A resource as context: completed, sent, read by zot, given to the model.
local words = {}
for _, it in ipairs(require('zot.refs').complete(H.ws, '#mcp:')) do
  words[#words + 1] = it.word
end
H.ok(vim.tbl_contains(words, '#mcp:fake:fake://notes/today'), '#mcp: completes the resources: ' .. vim.inspect(words))
vim.cmd('ZotPrompt')
local input = require('zot.input').get(H.ws, false)
vim.cmd('stopinsert')
vim.api.nvim_buf_set_lines(input.buf, 0, -1, false, { 'summarise #mcp:fake:fake://notes/today' })
H.keys('<C-s>')
local run = H.wait_run()
H.ok(not run.error, 'the run failed: ' .. tostring(run.error))
local sent = H.last_user_text()
H.ok(sent:find('<context kind="mcpResource" label="fake://notes/today" server="fake"', 1, true), 'the block:\n' .. sent)
H.ok(sent:find('Today: ship the Neovim chat.', 1, true), "the resource's text:\n" .. sent)
H.ok(
  H.chat_text():find('## You\nsummarise #mcp:fake:fake://notes/today\n📎 fake://notes/today', 1, true),
  'the chip:\n' .. H.chat_text()
)

H.expect_gone(pid, 'the first MCP server')
H.expect_gone(s.pid, 'the restarted MCP server')
H.done()
