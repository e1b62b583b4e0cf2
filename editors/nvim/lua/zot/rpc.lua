-- zot's own JSON-RPC transport for Neovim's LSP client.
--
-- Neovim before 0.10 calls server->client request handlers synchronously
-- and sends their return value at once. zot asks the user things
-- (zot/reviewEdit, window/showMessageRequest) that must not block the
-- editor, so on those versions the LSP client runs over this transport
-- instead: the same interface as vim.lsp.rpc.start's result, but request
-- handlers run in a coroutine and may yield until the user decides.
--
-- It also batches: frames are decoded in the read callback and handed to
-- the client in one scheduled drain per burst, time-sliced so thousands of
-- zot/event notifications never hold the UI for long.
local compat = require('zot.compat')
local uv = compat.uv
-- JSON null as Neovim's own transport gives it (compat.json_decode_opts).
local json_opts = compat.json_decode_opts()

local M = {}

-- Client error kinds, as vim.lsp.rpc.client_errors numbers them.
local function client_error(name)
  local ce = vim.lsp.rpc.client_errors or {}
  return ce[name] or 0
end

local function env_list(env)
  if not env then
    return nil
  end
  local merged = vim.tbl_extend('force', vim.fn.environ(), env)
  local out = {}
  for k, v in pairs(merged) do
    out[#out + 1] = k .. '=' .. tostring(v)
  end
  return out
end

local function format_error(err)
  if vim.lsp.rpc.format_rpc_error then
    return vim.lsp.rpc.format_rpc_error(err)
  end
  return string.format('%s: %s', tostring(err.code), tostring(err.message))
end

--- The JSON-RPC id of the server request whose handler is starting (nil
--- otherwise): Neovim's handlers are not told it.
M.request_id = nil

--- Slice budget of one drain, in nanoseconds.
M.slice_ns = 4e6

--- Starts cmd and returns an RPC client object.
--- Accepts both signatures of vim.lsp.rpc.start: (cmd, args, dispatchers,
--- extra) before 0.10 and (cmd_list, dispatchers, extra) from 0.10.
function M.start(cmd, cmd_args, dispatchers, extra)
  if type(cmd) == 'table' then
    cmd, cmd_args, dispatchers, extra = cmd[1], vim.list_slice(cmd, 2), cmd_args, dispatchers
  end
  dispatchers = dispatchers or {}
  local on_notification = dispatchers.notification or dispatchers.on_notification or function() end
  local on_request = dispatchers.server_request
    or dispatchers.on_request
    or function()
      return nil, vim.lsp.rpc.rpc_response_error(-32601)
    end
  local on_error = dispatchers.on_error or function() end
  local on_exit = dispatchers.on_exit or function() end

  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local handle, pid
  local next_id = 0
  local callbacks, reply_callbacks = {}, {}
  local queue, qhead, qtail = {}, 1, 0
  local draining = false
  local stderr_tail = {}
  local resume_timer = uv.new_timer()

  local rpc = {}

  local function report(kind, ...)
    local args = { n = select('#', ...), ... }
    vim.schedule(function()
      pcall(on_error, client_error(kind), unpack(args, 1, args.n))
    end)
  end

  local function onexit(code, signal)
    pcall(stdin.close, stdin)
    pcall(stdout.close, stdout)
    pcall(stderr.close, stderr)
    pcall(handle.close, handle)
    pcall(resume_timer.close, resume_timer)
    callbacks, reply_callbacks = {}, {}
    vim.schedule(function()
      pcall(on_exit, code, signal)
    end)
  end

  local spawn = { args = cmd_args or {}, stdio = { stdin, stdout, stderr } }
  if extra then
    spawn.cwd = extra.cwd
    spawn.env = env_list(extra.env)
    spawn.detached = extra.detached
  end
  handle, pid = uv.spawn(cmd, spawn, onexit)
  if not handle then
    pcall(stdin.close, stdin)
    pcall(stdout.close, stdout)
    pcall(stderr.close, stderr)
    vim.schedule(function()
      vim.notify(string.format('zot: cannot start `%s`: %s', cmd, tostring(pid)), vim.log.levels.ERROR)
    end)
    return nil
  end

  local function send(payload)
    if handle:is_closing() then
      return false
    end
    local body = vim.json.encode(payload)
    stdin:write('Content-Length: ' .. #body .. '\r\n\r\n' .. body)
    return true
  end

  -- Server -> client requests run in a coroutine: a handler may yield (see
  -- zot.util.await) and is answered when it returns.
  local function handle_request(msg)
    local co = coroutine.create(function()
      local ok, result, err = pcall(on_request, msg.method, msg.params)
      if not ok then
        err = { code = -32603, message = tostring(result) }
        result = nil
        report('SERVER_REQUEST_HANDLER_ERROR', err.message)
      elseif result == nil and err == nil then
        result = vim.NIL
      end
      if err ~= nil then
        send({ jsonrpc = '2.0', id = msg.id, error = err })
      else
        send({ jsonrpc = '2.0', id = msg.id, result = result })
      end
    end)
    -- The id is readable while the handler starts (before it first
    -- yields), so a dialog can be closed on $/cancelRequest for it.
    M.request_id = msg.id
    local ok, e = coroutine.resume(co)
    M.request_id = nil
    if not ok then
      report('SERVER_REQUEST_HANDLER_ERROR', e)
    end
  end

  local function handle_response(msg)
    local id = tonumber(msg.id)
    local notify_reply = id and reply_callbacks[id]
    if notify_reply then
      reply_callbacks[id] = nil
      pcall(notify_reply, id)
    end
    local cb = id and callbacks[id]
    if msg.error and msg.error.code == -32800 then
      -- RequestCancelled is RPC-internal, as in vim.lsp.rpc.
      callbacks[id] = nil
      return
    end
    if not cb then
      report('NO_RESULT_CALLBACK_FOUND', msg)
      return
    end
    callbacks[id] = nil
    local err = msg.error
    if err then
      err = setmetatable(err, { __tostring = format_error })
    end
    local ok, e = pcall(cb, err, msg.result)
    if not ok then
      report('SERVER_RESULT_CALLBACK_ERROR', e)
    end
  end

  local function dispatch(msg)
    if type(msg) ~= 'table' then
      report('INVALID_SERVER_MESSAGE', msg)
    elseif type(msg.method) == 'string' and msg.id ~= nil then
      handle_request(msg)
    elseif type(msg.method) == 'string' then
      local ok, e = pcall(on_notification, msg.method, msg.params)
      if not ok then
        report('NOTIFICATION_HANDLER_ERROR', e)
      end
    elseif msg.id ~= nil then
      handle_response(msg)
    else
      report('INVALID_SERVER_MESSAGE', msg)
    end
  end

  -- Frames wait here (raw) until the main loop decodes and dispatches them
  -- in time slices; between slices libuv runs (input, timers, more reads).
  -- Past HIGH waiting frames reading stops, so zot's writes block instead
  -- of the editor drowning.
  local HIGH, LOW = 4096, 1024
  local paused = false
  local on_read
  local drain
  local function schedule_drain(yield)
    if draining then
      return
    end
    draining = true
    if yield then
      resume_timer:start(0, 0, function()
        vim.schedule(drain)
      end)
    else
      vim.schedule(drain)
    end
  end

  drain = function()
    draining = false
    local t0 = uv.hrtime()
    local n = 0
    while qhead <= qtail do
      local body = queue[qhead]
      queue[qhead] = nil
      qhead = qhead + 1
      local ok, msg = pcall(vim.json.decode, body, json_opts)
      if ok then
        dispatch(msg)
      else
        report('INVALID_SERVER_JSON', msg)
      end
      n = n + 1
      if paused and qtail - qhead < LOW and not stdout:is_closing() then
        paused = false
        stdout:read_start(on_read)
      end
      if n % 16 == 0 and qhead <= qtail and uv.hrtime() - t0 > M.slice_ns then
        schedule_drain(true)
        return
      end
    end
    qhead, qtail = 1, 0
  end

  local function enqueue(body)
    qtail = qtail + 1
    queue[qtail] = body
    if not paused and qtail - qhead > HIGH then
      paused = true
      stdout:read_stop()
    end
    schedule_drain(false)
  end

  -- Content-Length framing. Chunks are joined only when a whole frame may
  -- be there, so a large message is not copied once per chunk.
  local chunks, have, need = {}, 0, nil
  local buf = ''
  local function parse()
    local pos = 1
    local len = #buf
    while true do
      local hs, he = buf:find('\r\n\r\n', pos, true)
      if not hs then
        need = nil
        break
      end
      local n = tonumber(buf:sub(pos, hs - 1):match('[Cc]ontent%-[Ll]ength:%s*(%d+)'))
      if not n then
        report('INVALID_SERVER_MESSAGE', buf:sub(pos, hs - 1))
        pos = he + 1
      elseif he + n > len then
        need = he + n - pos + 1
        break
      else
        enqueue(buf:sub(he + 1, he + n))
        pos = he + n + 1
      end
    end
    buf = buf:sub(pos)
  end

  on_read = function(err, chunk)
    if err then
      report('READ_ERROR', err)
      return
    end
    if not chunk then
      return
    end
    chunks[#chunks + 1] = chunk
    have = have + #chunk
    if need and #buf + have < need then
      return
    end
    buf = buf .. table.concat(chunks)
    chunks, have = {}, 0
    parse()
  end
  stdout:read_start(on_read)

  stderr:read_start(function(_, chunk)
    if chunk then
      stderr_tail[#stderr_tail + 1] = chunk
      if #stderr_tail > 200 then
        table.remove(stderr_tail, 1)
      end
    end
  end)

  function rpc.request(method, params, callback, notify_reply_callback)
    next_id = next_id + 1
    local id = next_id
    if not send({ jsonrpc = '2.0', id = id, method = method, params = params }) then
      return false
    end
    callbacks[id] = callback
    if notify_reply_callback then
      reply_callbacks[id] = notify_reply_callback
    end
    return true, id
  end

  function rpc.notify(method, params)
    return send({ jsonrpc = '2.0', method = method, params = params })
  end

  function rpc.is_closing()
    return handle == nil or handle:is_closing()
  end

  function rpc.terminate()
    if handle and not handle:is_closing() then
      handle:kill(15)
    end
  end

  --- The last lines zot wrote to stderr.
  function rpc.stderr()
    return table.concat(stderr_tail)
  end

  rpc.handle = handle
  rpc.pid = pid
  return rpc
end

return M
