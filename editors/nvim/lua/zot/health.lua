-- :checkhealth zot — the binary and its version, the provider and key
-- state and the extensions, as the server sees them (the running client
-- of the current root, else a short-lived `zot lsp` probe).
local P = require('zot.protocol')
local compat = require('zot.compat')
local config = require('zot.config')
local util = require('zot.util')

local M = {}

--- Starts `zot lsp` on zot's transport, initializes it and returns what it
--- says (info, extensions); shuts it down again. Bounded waits.
local function probe(cmd, root)
  local rpc = require('zot.rpc')
  local exts_changed
  local client = rpc.start(cmd[1], vim.list_slice(cmd, 2), {
    notification = function(method, params)
      if method == P.server_notification.extensions_changed then
        exts_changed = params
      end
    end,
    server_request = function(method)
      -- Trust prompts and the like: decline, this is only a probe.
      if method == P.lsp.show_message_request then
        return vim.NIL
      end
      return vim.NIL
    end,
  }, { cwd = compat.is_dir(root) and root or nil, env = config.get().cmd_env })
  if not client then
    return nil, 'could not start ' .. table.concat(cmd, ' ')
  end
  local init
  client.request(P.lsp.initialize, {
    processId = vim.fn.getpid(),
    rootUri = vim.uri_from_fname(root),
    workspaceFolders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    capabilities = { experimental = { zot = { panels = false } } },
    initializationOptions = config.init_options(),
    clientInfo = { name = 'zot.nvim health' },
  }, function(err, result)
    init = { err = err, result = result }
  end)
  vim.wait(10000, function()
    return init ~= nil
  end, 10)
  local out = {}
  if not init then
    client.terminate()
    return nil, 'zot lsp did not answer initialize within 10 s'
  end
  if init.err then
    client.terminate()
    return nil, 'initialize failed: ' .. tostring(init.err.message)
  end
  client.notify(P.lsp.initialized, vim.empty_dict())
  out.info = (((init.result or {}).capabilities or {}).experimental or {}).zot or {}
  out.server_info = (init.result or {}).serverInfo
  -- Extensions start after initialized; wait (bounded) until they settle:
  -- the host has loaded and no extension is still starting.
  vim.wait(8000, function()
    if exts_changed == nil or exts_changed.loading then
      return false
    end
    for _, x in ipairs(exts_changed.extensions or {}) do
      if x.state == 'starting' then
        return false
      end
    end
    return true
  end, 20)
  local exts
  client.request(P.request.extensions, vim.empty_dict(), function(err, result)
    exts = { err = err, result = result }
  end)
  vim.wait(5000, function()
    return exts ~= nil
  end, 10)
  out.extensions = exts and exts.result or exts_changed
  out.mcp = M.settled_mcp(function(cb)
    client.request(P.request.mcp, vim.empty_dict(), function(err, result)
      cb(not err and result or nil)
    end)
  end)
  local done = false
  client.request(P.lsp.shutdown, nil, function()
    done = true
    client.notify(P.lsp.exit, nil)
  end)
  vim.wait(5000, function()
    return done and client.is_closing()
  end, 20)
  if not client.is_closing() then
    client.terminate()
  end
  out.stderr = client.stderr()
  return out
end

--- The provider base URL zot is told (setup's base_url, else --base-url
--- in cmd), or nil for the provider's default.
function M.base_url(o)
  if o.base_url and o.base_url ~= '' then
    return o.base_url
  end
  local cmd = o.cmd or {}
  for i, a in ipairs(cmd) do
    if a == '--base-url' or a == '-base-url' then
      return cmd[i + 1]
    end
    local v = a:match('^%-%-?base%-url=(.*)$')
    if v then
      return v
    end
  end
  return nil
end

--- Whether url answers HTTP (any status counts: the server is there): a
--- HEAD with a short timeout through curl, else a TCP connection (and for
--- http:// a HEAD over it). Returns ok, what was seen.
function M.reach(url, timeout_ms)
  timeout_ms = timeout_ms or 3000
  if vim.fn.executable('curl') == 1 then
    local out = vim.fn.system({
      'curl',
      '-sS',
      '-I',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '--max-time',
      tostring(timeout_ms / 1000),
      url,
    })
    out = vim.trim(out)
    local code = tonumber(out:match('(%d%d%d)$') or '')
    if vim.v.shell_error == 0 and code and code > 0 then
      return true, 'HTTP ' .. code
    end
    local why = vim.trim((out:gsub('%d%d%d$', '')))
    return false, why ~= '' and why or 'no answer'
  end
  local scheme, host, port = url:match('^(https?)://%[?([^%]/:]+)%]?:?(%d*)')
  if not host then
    return false, 'not an http(s) URL'
  end
  port = tonumber(port) or (scheme == 'https' and 443 or 80)
  local uv = compat.uv
  local result
  uv.getaddrinfo(host, nil, { socktype = 'stream' }, function(err, res)
    if err or not res or not res[1] then
      result = { false, 'cannot resolve ' .. host .. ': ' .. tostring(err) }
      return
    end
    local tcp = uv.new_tcp()
    tcp:connect(res[1].addr, port, function(cerr)
      if cerr then
        result = { false, 'cannot connect: ' .. tostring(cerr) }
      else
        result = { true, 'a server listens on ' .. host .. ':' .. port }
      end
      tcp:close()
    end)
  end)
  vim.wait(timeout_ms, function()
    return result ~= nil
  end, 20)
  if not result then
    return false, 'no answer within ' .. timeout_ms .. ' ms'
  end
  return result[1], result[2]
end

--- Asks zot/mcp (through request(cb)) until no server is starting, for at
--- most 8 s; returns the last answer (nil if none came).
function M.settled_mcp(request)
  local last
  local deadline = vim.loop.now() + 8000
  while vim.loop.now() < deadline do
    local got, res = false, nil
    request(function(r)
      got, res = true, r
    end)
    vim.wait(3000, function()
      return got
    end, 10)
    last = res or last
    local busy = last == nil
    for _, s in ipairs((last and last.servers) or {}) do
      if s.state == 'starting' then
        busy = true
      end
    end
    if not busy then
      break
    end
    vim.wait(100)
  end
  return last
end

--- Reports the MCP servers of a zot/mcp answer.
local function report_mcp(h, res)
  h.start('zot: MCP servers')
  if not res then
    h.warn('zot/mcp did not answer')
    return
  end
  if util.val(res.disabled) then
    h.info('MCP is off (--no-mcp or noMcp)')
    return
  end
  for _, e in ipairs(util.val(res.errors) or {}) do
    h.error(e)
  end
  local list = util.val(res.servers) or {}
  if #list == 0 then
    h.info('no MCP servers configured ($ZOT_HOME/mcp.json, .mcp.json, .zot/mcp.json)')
  end
  for _, s in ipairs(list) do
    local tools = util.val(s.tools) or {}
    local line = string.format(
      '%s (%s, %s): %s, %d tools',
      tostring(s.name),
      tostring(s.scope),
      tostring(s.transport),
      tostring(s.state),
      #tools
    )
    local last = util.val(s.lastError)
    if last and last ~= '' then
      line = line .. ' — ' .. last
    end
    if s.state == 'ready' then
      h.ok(line)
    elseif s.state == 'failed' or s.state == 'invalid' then
      h.error(
        line,
        { ':ZotMcp restart ' .. tostring(s.name) .. ' after fixing it; its log: ' .. tostring(util.val(s.log) or '-') }
      )
    else
      h.warn(line)
    end
  end
end

function M.check()
  local h = compat.health()
  local o = config.get()
  local v = vim.version()
  h.start('zot: Neovim')
  h.ok(string.format('Neovim %d.%d.%d', v.major, v.minor, v.patch))
  h.info(
    'transport: '
      .. (o.transport == 'builtin' and "Neovim's (reviews wait synchronously before 0.10)" or "zot's (zot.rpc)")
      .. '; '
      .. (vim.lsp.start and 'vim.lsp.start' or 'vim.lsp.start_client + buf_attach_client')
  )

  h.start('zot: binary')
  local cmd, source = config.server()
  local bin = cmd[1]
  local path = vim.fn.exepath(bin)
  if path == '' then
    h.error(string.format('`%s` (from %s) is not executable or not on PATH', bin, config.source_names[source]), {
      'Build it with the plugin (lazy.nvim: build = "go build -o editors/nvim/bin/zot ./cmd/zot"; :help zot-install), '
        .. 'go install github.com/zot-editors/zot/cmd/zot@latest, '
        .. 'or set require("zot").setup({ cmd = { "/path/to/zot", "lsp" } })',
    })
    return
  end
  h.ok(string.format('binary: %s (from %s)', path, config.source_names[source]))
  local version = vim.fn.system({ path, 'version' })
  if vim.v.shell_error ~= 0 then
    h.error('`' .. path .. ' version` failed: ' .. vim.trim(version))
  else
    h.ok('version: ' .. vim.trim(version))
  end
  local shown = {}
  for i, a in ipairs(cmd) do
    shown[i] = (cmd[i - 1] == '--api-key' or cmd[i - 1] == '-api-key') and '***'
      or a:gsub('^(%-%-?api%-key=).*', '%1***')
  end
  h.info('command: ' .. table.concat(shown, ' '))
  h.info("logs: zot's stderr and " .. require('zot.log').dir() .. ' (:ZotLog)')

  h.start('zot: server')
  local c = require('zot.client')
  local root = c.root_for(vim.api.nvim_get_current_buf())
  local st = c.get(root)
  local info, exts, mcp
  if st and st.ready then
    h.ok(string.format('running for %s (pid %s)', root, tostring(st.pid or '?')))
    info = st.info or {}
    exts = c.request_sync(st, P.request.extensions, nil, 5000) or st.extensions
    mcp = M.settled_mcp(function(cb)
      cb(c.request_sync(st, P.request.mcp, nil, 5000))
    end)
  else
    h.info('no zot client runs for ' .. root .. '; asked a short-lived `zot lsp`')
    local res, err = probe(cmd, root)
    if not res then
      h.error(err)
      return
    end
    info, exts, mcp = res.info, res.extensions, res.mcp
  end
  local mismatch = require('zot.handshake').check(info, path, source)
  if mismatch then
    h.error(mismatch)
  else
    h.ok(string.format('protocol version %d, revision %d (this plugin needs %d)', P.version, info.protocol, P.revision))
  end
  h.info(string.format('workspace: %s', tostring(info.cwd or root)))
  h.info(string.format('permission mode: %s', tostring(info.permissionMode or '?')))

  h.start('zot: provider')
  local err = util.val(info.error)
  if err and err ~= '' then
    h.error(err, {
      'Set an API key: ANTHROPIC_API_KEY / OPENAI_API_KEY, `zot` login ($ZOT_HOME/auth.json), or setup({ api_key = … })',
    })
  else
    h.ok(string.format('provider %s, model %s (the agent can start)', tostring(info.provider), tostring(info.model)))
  end
  local keys = {}
  for _, k in ipairs({ 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY' }) do
    if (os.getenv(k) or '') ~= '' then
      keys[#keys + 1] = k
    end
  end
  if o.api_key then
    keys[#keys + 1] = 'setup({ api_key })'
  end
  h.info('keys seen by Neovim: ' .. (#keys > 0 and table.concat(keys, ', ') or 'none in the environment'))
  local url = M.base_url(o)
  if url then
    local ok, seen = M.reach(url)
    if ok then
      h.ok(string.format('base URL %s answers (%s)', url, seen))
    else
      h.error(string.format('base URL %s does not answer: %s', url, seen), {
        'Start the server at that address, or fix setup({ base_url = … }) / --base-url',
      })
    end
  else
    h.info("base URL: the provider's default")
  end

  h.start('zot: extensions')
  exts = exts or {}
  if util.val(exts.error) then
    h.warn('the extension host: ' .. tostring(exts.error))
  end
  local list = exts.extensions or {}
  if #list == 0 then
    h.info('no extensions')
  end
  for _, e in ipairs(list) do
    local line = string.format(
      '%s %s (%s): %s',
      tostring(e.name),
      tostring(e.version or ''),
      tostring(e.source or ''),
      tostring(e.state)
    )
    local reason = util.val(e.reason)
    if reason and reason ~= '' then
      line = line .. ' — ' .. reason
    end
    if e.state == 'loaded' then
      h.ok(line)
    elseif e.state == 'disabled' or e.state == 'shadowed' then
      h.info(line)
    else
      h.warn(line)
    end
  end
  report_mcp(h, mcp)
end

return M
