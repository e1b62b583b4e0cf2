-- Helpers of the headless tests (tests/run.sh runs each test_*.lua in a
-- fresh `nvim --headless -u NONE`). Waits are bounded to catch hangs; no
-- assertion is about timing.
local H = {}

H.dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
H.plugin = vim.fn.fnamemodify(H.dir, ':h')
H.bin = os.getenv('ZOT_BIN') or 'zot'
H.url = os.getenv('ZOT_TEST_URL') or ''
H.ws = os.getenv('ZOT_TEST_WS') or vim.fn.tempname()
H.tmp = os.getenv('ZOT_TEST_TMP') or vim.fn.tempname()
vim.fn.mkdir(H.ws, 'p')
vim.fn.mkdir(H.tmp, 'p')

vim.opt.rtp:prepend(H.plugin)
vim.cmd('runtime plugin/zot.lua')
vim.o.swapfile = false
vim.o.hidden = true
vim.cmd('cd ' .. vim.fn.fnameescape(H.ws))

local function fmt(v)
  return type(v) == 'string' and string.format('%q', v) or vim.inspect(v)
end

function H.log(...)
  local parts = {}
  for i = 1, select('#', ...) do
    parts[#parts + 1] = tostring((select(i, ...)))
  end
  io.stdout:write(table.concat(parts, ' ') .. '\n')
end

function H.ok(cond, msg)
  if not cond then
    error('assertion failed: ' .. (msg or '?'), 2)
  end
end

function H.eq(want, got, msg)
  if not vim.deep_equal(want, got) then
    error(string.format('%s: want %s, got %s', msg or 'not equal', fmt(want), fmt(got)), 2)
  end
end

--- Waits (bounded, to catch hangs) until cond() is true.
function H.wait(what, cond, ms)
  if not vim.wait(ms or 30000, cond, 10) then
    error('timed out waiting for ' .. what .. '\n' .. H.debug(), 2)
  end
end

--- The zot command line for this test.
function H.cmd(extra)
  local cmd = { H.bin, 'lsp', '--api-key', 'test-key', '--base-url', H.url }
  for _, a in ipairs(extra or {}) do
    cmd[#cmd + 1] = a
  end
  return cmd
end

function H.setup(opts)
  opts = opts or {}
  opts.cmd = opts.cmd or H.cmd(opts.args)
  opts.args = nil
  opts.root_dir = opts.root_dir or H.ws
  opts.transport = opts.transport or os.getenv('ZOT_TEST_TRANSPORT')
  require('zot').setup(opts)
end

function H.write(path, text)
  local full = H.ws .. '/' .. path
  vim.fn.mkdir(vim.fn.fnamemodify(full, ':h'), 'p')
  local f = assert(io.open(full, 'w'))
  f:write(text)
  f:close()
  return full
end

function H.read(path)
  local f = io.open(H.ws .. '/' .. path, 'r')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

function H.state()
  return require('zot.client').get(H.ws)
end

function H.chat()
  return require('zot.chat').get(H.ws, false)
end

function H.chat_text()
  local c = H.chat()
  if not c then
    return ''
  end
  return table.concat(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false), '\n')
end

function H.wait_ready()
  H.wait('zot to start', function()
    local st = H.state()
    return st and st.ready
  end)
  return H.state()
end

--- Waits until the last run (another than `after`, if given) is done.
function H.wait_run(after, ms)
  H.wait('the run to finish', function()
    local c = H.chat()
    return c and c.last_run and c.last_run ~= after and c.last_run.done
  end, ms)
  return H.chat().last_run
end

--- The requests the scripted model received so far, each { path, body }
--- with body the decoded JSON: `zot mock-llm` serves them at GET
--- /llmtest/requests (agent/llmtest).
function H.model_requests()
  H.ok(H.url ~= '', 'ZOT_TEST_URL is not set (run the test with tests/run.sh)')
  local out = vim.fn.system({ 'curl', '-sS', '--max-time', '20', H.url .. '/llmtest/requests' })
  H.ok(vim.v.shell_error == 0, 'GET /llmtest/requests: ' .. out)
  local list = {}
  for _, r in ipairs(vim.json.decode(out)) do
    if type(r.body) == 'table' and r.body.messages then
      list[#list + 1] = r
    end
  end
  return list
end

--- The text of the last user message of the last model request.
function H.last_user_text()
  local reqs = H.model_requests()
  local body = reqs[#reqs] and reqs[#reqs].body or {}
  local msgs = body.messages or {}
  for i = #msgs, 1, -1 do
    local m = msgs[i]
    if m.role == 'user' then
      if type(m.content) == 'string' then
        return m.content
      end
      local parts = {}
      for _, c in ipairs(m.content or {}) do
        if c.type == 'text' then
          parts[#parts + 1] = c.text
        end
      end
      if #parts > 0 then
        return table.concat(parts, '\n')
      end
    end
  end
  return ''
end

--- Records every notification the client sends (zot/panel/key …).
function H.record_sent(state)
  local sent = {}
  local c = require('zot.client').lsp(state)
  local compat = require('zot.compat')
  local orig = c.notify
  if compat.method_calls then
    c.notify = function(self, method, params)
      sent[#sent + 1] = { method = method, params = params }
      return orig(self, method, params)
    end
  else
    c.notify = function(method, params)
      sent[#sent + 1] = { method = method, params = params }
      return orig(method, params)
    end
  end
  return sent
end

--- Captures vim.notify.
function H.capture_notify()
  local got = {}
  vim.notify = function(msg, level, _)
    got[#got + 1] = { msg = msg, level = level }
  end
  return got
end

--- Feeds keys as typed (mappings apply) and runs them now.
function H.keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mx', false)
end

function H.debug()
  local ok, s = pcall(function()
    local lines = { '--- chat ---', H.chat_text() }
    local st = H.state()
    local c = st and require('zot.client').lsp(st)
    if c and c.rpc and c.rpc.stderr then
      lines[#lines + 1] = '--- zot stderr ---'
      lines[#lines + 1] = c.rpc.stderr()
    end
    return table.concat(lines, '\n')
  end)
  return ok and s or ''
end

--- Waits until zot reports extension name as loaded; returns its status.
function H.wait_extension(name)
  local found
  H.wait('extension ' .. name .. ' to load', function()
    local st = H.state()
    local exts = st and st.extensions and st.extensions.extensions or {}
    for _, e in ipairs(exts) do
      if e.name == name and e.state == 'loaded' then
        found = e
        return true
      end
    end
    return false
  end)
  return found
end

--- Notes a process the runner must find gone once nvim has exited.
function H.expect_gone(pid, what)
  local f = assert(io.open(H.tmp .. '/pids', 'a'))
  f:write(string.format('%d %s\n', pid, what))
  f:close()
end

--- Ends a passing test.
-- review_setup opens hello.txt ("hello world") in ask mode and prompts
-- "change the greeting"; with wait, it returns once the review is open.
-- Returns the file's buffer and the zot.review module.
function H.review_setup(wait)
  H.setup({ permission = 'ask' })
  local file = H.write('hello.txt', 'hello world\n')
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local review = require('zot.review')
  if wait ~= false then
    vim.cmd('ZotPrompt change the greeting')
    H.wait('the review', function()
      return #review.active == 1
    end)
  end
  return buf, review
end

function H.done()
  io.stdout:write('\nPASS\n')
  vim.cmd('qall!')
end

return H
