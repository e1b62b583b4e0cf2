-- The Neovim half of `make bench-editors` (scripts/bench-editors.sh runs
-- it; not a test: nothing is asserted about time). In a Neovim with a real
-- UI (the TUI, in a pseudo-terminal, so redraws happen as for a user):
-- WARM + N prompts against `zot mock-llm` (no latency), each measured
--   command → first text_delta handled (zot/event in the plugin),
--   command → first buffer change with the answer's text,
--   command → the end of the first redraw of the chat window after that
--             change (a decoration provider's on_end: "painted"),
-- each from vim.loop.hrtime() in the same process, and before each prompt
-- the floor: a bare TCP socket posting a model request to the same mock
-- and timing its first byte. CPU of nvim and of zot over the measured
-- prompts from /proc/PID/stat. Results go to $ZOT_BENCH_OUT as JSON.
-- Env: ZOT_BIN, ZOT_BENCH_URL (the mock), ZOT_BENCH_WS, ZOT_BENCH_OUT,
-- ZOT_BENCH_N (default 20), ZOT_BENCH_WARM (default 3).
local uv = vim.uv or vim.loop
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local plugin = vim.fn.fnamemodify(here, ':h')
local N = tonumber(os.getenv('ZOT_BENCH_N') or '') or 20
local WARM = tonumber(os.getenv('ZOT_BENCH_WARM') or '') or 3
local url = assert(os.getenv('ZOT_BENCH_URL'), 'ZOT_BENCH_URL: the mock-llm URL')
local ws = assert(os.getenv('ZOT_BENCH_WS'), 'ZOT_BENCH_WS: the workspace')
local outfile = assert(os.getenv('ZOT_BENCH_OUT'), 'ZOT_BENCH_OUT: where the results go')

local function finish(result)
  local f = assert(io.open(outfile, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd('qall!')
end

local function fail(msg)
  finish({ error = tostring(msg) })
end

vim.opt.rtp:prepend(plugin)
vim.cmd('runtime plugin/zot.lua')
vim.o.swapfile = false
vim.o.hidden = true
vim.cmd('cd ' .. vim.fn.fnameescape(ws))
require('zot').setup({
  cmd = { os.getenv('ZOT_BIN') or 'zot', 'lsp', '--api-key', 'bench-key', '--base-url', url },
  root_dir = ws,
  chat = { restore = false },
})
vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/notes.md'))
local chat_mod = require('zot.chat')

-- CPU seconds (user + system) of a process.
local function cpu(pid)
  local f = io.open('/proc/' .. pid .. '/stat', 'r')
  if not f then
    return 0
  end
  local s = f:read('*a')
  f:close()
  -- Fields after the command's closing parenthesis: state is field 3,
  -- utime 14, stime 15.
  local rest = s:match('%) (.*)$')
  local fields = vim.split(rest, ' ', { trimempty = true })
  local hz = 100 -- USER_HZ: the kernel's unit for these fields on Linux
  return (tonumber(fields[12]) + tonumber(fields[13])) / hz
end

-- The floor: a bare socket sends a model request to the mock and times
-- the first byte of its answer.
local host, port = url:match('^http://([^:/]+):(%d+)')
local body = vim.json.encode({
  model = 'claude-sonnet-4-5',
  max_tokens = 1024,
  stream = true,
  messages = { { role = 'user', content = 'floor' } },
})
local request = table.concat({
  'POST /v1/messages HTTP/1.1',
  'Host: ' .. host .. ':' .. port,
  'Content-Type: application/json',
  'x-api-key: bench-key',
  'anthropic-version: 2023-06-01',
  'Connection: close',
  'Content-Length: ' .. #body,
  '',
  body,
}, '\r\n')
local function floor(done)
  local tcp = uv.new_tcp()
  local t0 = uv.hrtime()
  local got = false
  tcp:connect(host, tonumber(port), function(err)
    if err then
      tcp:close()
      vim.schedule(function()
        fail('floor: connect: ' .. err)
      end)
      return
    end
    tcp:write(request)
    tcp:read_start(function(rerr, chunk)
      if chunk and not got then
        got = true
        local ms = (uv.hrtime() - t0) / 1e6
        vim.schedule(function()
          local ok, e = pcall(done, ms)
          if not ok then
            fail(e)
          end
        end)
      end
      if rerr or not chunk then
        tcp:read_stop()
        tcp:close()
      end
    end)
  end)
end

-- One prompt's marks (hrtime, ns).
local cur
local on_event = chat_mod.on_event
chat_mod.on_event = function(state, ev)
  if cur and not cur.event and ev.type == 'text_delta' then
    cur.event = uv.hrtime()
  end
  return on_event(state, ev)
end

local attached = false
local function attach(buf)
  if attached then
    return
  end
  attached = true
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b, _, first, _, last_new)
      if cur and cur.event and not cur.change then
        for _, l in ipairs(vim.api.nvim_buf_get_lines(b, first, last_new, false)) do
          if l:find('Hello', 1, true) then
            cur.change = uv.hrtime()
            break
          end
        end
      end
    end,
  })
end

-- Painted: the end of the first redraw that drew the chat window after
-- the change.
local drew_chat = false
vim.api.nvim_set_decoration_provider(vim.api.nvim_create_namespace('zot_bench'), {
  on_win = function(_, _, buf)
    local c = chat_mod.get(ws, false)
    if cur and cur.change and not cur.paint and c and buf == c.buf then
      drew_chat = true
    end
    return false
  end,
  on_end = function()
    if drew_chat and cur and not cur.paint then
      cur.paint = uv.hrtime()
    end
    drew_chat = false
  end,
})

local v = vim.version()
local results = {
  nvim = string.format('%d.%d.%d', v.major, v.minor, v.patch),
  warm = WARM,
  -- What the report shows besides paint, in order.
  marks = { 'sent', 'event', 'change' },
  prompts = {},
  floor = {},
}
local pid_zot
local cpu0

local function poll(cond, then_)
  local timer = uv.new_timer()
  local t0 = uv.hrtime()
  local stopped = false
  timer:start(
    5,
    5,
    vim.schedule_wrap(function()
      if stopped then
        return -- a tick queued before the stop
      end
      local waited = (uv.hrtime() - t0) / 1e6
      local ok, met = pcall(cond)
      if not ok or met or waited > 60000 then
        stopped = true
        timer:stop()
        timer:close()
      end
      if not ok then
        fail(met)
      elseif met then
        local ok2, err = pcall(then_)
        if not ok2 then
          fail(err)
        end
      elseif waited > 60000 then
        fail('timed out after 60 s: ' .. vim.inspect(cur or 'waiting for zot and a UI'))
      end
    end)
  )
end

local step
step = function(i)
  if i > WARM + N then
    results.cpu = {
      nvim_ms = (cpu(vim.fn.getpid()) - cpu0.nvim) * 1000 / N,
      zot_ms = (cpu(pid_zot) - cpu0.zot) * 1000 / N,
    }
    finish(results)
    return
  end
  if i == WARM + 1 then
    cpu0 = { nvim = cpu(vim.fn.getpid()), zot = cpu(pid_zot) }
  end
  floor(function(floor_ms)
    local before = chat_mod.get(ws, false)
    before = before and before.last_run
    cur = { i = i, start = uv.hrtime() }
    vim.cmd('ZotPrompt bench ' .. i)
    cur.sent = uv.hrtime()
    poll(function()
      local c = chat_mod.get(ws, false)
      return c and c.last_run and c.last_run ~= before and c.last_run.done and cur.paint
    end, function()
      local c = chat_mod.get(ws, false)
      if c.last_run.error then
        return fail('the run failed: ' .. tostring(c.last_run.error))
      end
      if i > WARM then
        local ms = function(t)
          return (t - cur.start) / 1e6
        end
        table.insert(results.floor, floor_ms)
        table.insert(
          results.prompts,
          { sent = ms(cur.sent), event = ms(cur.event), change = ms(cur.change), paint = ms(cur.paint) }
        )
      end
      cur = nil
      -- The next prompt after the redraws of this one (as a user would).
      vim.defer_fn(function()
        step(i + 1)
      end, 50)
    end)
  end)
end

local ok, err = pcall(function()
  require('zot').open_chat({ focus = false })
  poll(function()
    local st = require('zot.client').get(ws)
    -- A UI is attached (the TUI, or a remote one): redraws happen.
    return st and st.ready and st.pid and #vim.api.nvim_list_uis() > 0
  end, function()
    pid_zot = require('zot.client').get(ws).pid
    attach(chat_mod.get(ws, false).buf)
    step(1)
  end)
end)
if not ok then
  fail(err)
end
