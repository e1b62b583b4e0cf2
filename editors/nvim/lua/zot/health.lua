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
  local cmd = o.cmd or { 'zot', 'lsp' }
  local bin = cmd[1]
  local path = vim.fn.exepath(bin)
  if path == '' then
    h.error(
      string.format('`%s` is not executable or not on PATH', bin),
      { 'Install zot (go install …/cmd/zot) or set require("zot").setup({ cmd = { "/path/to/zot", "lsp" } })' }
    )
    return
  end
  h.ok('binary: ' .. path)
  local version = vim.fn.system({ path, 'version' })
  if vim.v.shell_error ~= 0 then
    h.error('`' .. path .. ' version` failed: ' .. vim.trim(version))
  else
    h.ok('version: ' .. vim.trim(version))
  end
  local shown = {}
  for i, a in ipairs(cmd) do
    shown[i] = (cmd[i - 1] == '--api-key' or cmd[i - 1] == '-api-key') and '***' or a:gsub('^(%-%-?api%-key=).*', '%1***')
  end
  h.info('command: ' .. table.concat(shown, ' '))

  h.start('zot: server')
  local c = require('zot.client')
  local root = c.root_for(vim.api.nvim_get_current_buf())
  local st = c.get(root)
  local info, exts
  if st and st.ready then
    h.ok(string.format('running for %s (pid %s)', root, tostring(st.pid or '?')))
    info = st.info or {}
    exts = c.request_sync(st, P.request.extensions, nil, 5000) or st.extensions
  else
    h.info('no zot client runs for ' .. root .. '; asked a short-lived `zot lsp`')
    local res, err = probe(cmd, root)
    if not res then
      h.error(err)
      return
    end
    info, exts = res.info, res.extensions
  end
  if info.protocolVersion == 1 then
    h.ok('protocol version 1')
  else
    h.warn('protocol version ' .. tostring(info.protocolVersion) .. ' (this plugin speaks 1)')
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
    local line = string.format('%s %s (%s): %s', tostring(e.name), tostring(e.version or ''), tostring(e.source or ''), tostring(e.state))
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
end

return M
