-- Feature detection across Neovim 0.7 .. newest. Everything version-specific
-- lives here so the rest of the plugin reads the same on every version.
local M = {}

M.uv = vim.uv or vim.loop

local function has(feature)
  return vim.fn.has(feature) == 1
end

M.has_winbar = has('nvim-0.8')
M.has_float_title = has('nvim-0.9')
M.has_float_footer = has('nvim-0.10')
-- From 0.11 the client object's methods are called with ':'.
M.method_calls = has('nvim-0.11')
-- Neovim 0.10+ runs server->client request handlers inside a coroutine, so a
-- handler may wait for the user without blocking the editor. Older versions
-- answer synchronously; there zot uses its own transport (zot.rpc).
M.async_server_requests = has('nvim-0.10')

--- How Neovim's own LSP transport decodes JSON null in objects: as nil
--- (luanil, up to 0.11) or as vim.NIL (0.12). zot's transport must do the
--- same: vim.lsp.util tests `version ~= vim.NIL` on the one and `version
--- and …` on the other, and breaks on the other value (an edit of a file
--- that is not open carries "version": null). Read from the runtime's
--- vim/lsp/rpc.lua itself, so it follows whichever Neovim runs.
function M.json_decode_opts()
  if M._json_opts == nil then
    M._json_opts = false
    local file = vim.api.nvim_get_runtime_file('lua/vim/lsp/rpc.lua', false)[1]
    local f = file and io.open(file, 'r')
    if f then
      local src = f:read('*a')
      f:close()
      if src:find('json.decode, body, { luanil = { object = true } }', 1, true) then
        M._json_opts = { luanil = { object = true } }
      end
    else
      M._json_opts = { luanil = { object = true } }
    end
  end
  return M._json_opts or {}
end

function M.client(id)
  return vim.lsp.get_client_by_id(id)
end

function M.request(client, method, params, handler, bufnr)
  if M.method_calls then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if M.method_calls then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.stop(client, force)
  if M.method_calls then
    return client:stop(force)
  end
  return client.stop(force)
end

function M.is_stopped(client)
  if M.method_calls then
    return client:is_stopped()
  end
  return client.is_stopped()
end

function M.buf_is_attached(bufnr, client_id)
  return vim.lsp.buf_is_attached(bufnr, client_id)
end

--- Process ids of Neovim's direct children.
function M.children()
  local ok, kids = pcall(vim.api.nvim_get_proc_children, vim.fn.getpid())
  if not ok or type(kids) ~= 'table' then
    return {}
  end
  return kids
end

--- Whether a process exists (and is not a zombie we could still reap).
function M.alive(pid)
  if not pid then
    return false
  end
  local ok, r = pcall(M.uv.kill, pid, 0)
  return ok and r == 0
end

function M.health()
  local h = vim.health
  if not (h and (h.start or h.report_start)) then
    h = require('health')
  end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

--- vim.split(s, sep, {plain=true}) on every version.
function M.split(s, sep)
  return vim.split(s, sep, { plain = true })
end

--- UTF-16 code units in s before byte index idx (LSP positions).
function M.utf16_index(s, idx)
  if has('nvim-0.11') then
    return vim.str_utfindex(s, 'utf-16', idx, false)
  end
  local _, u16 = vim.str_utfindex(s, idx)
  return u16
end

function M.is_dir(path)
  local st = M.uv.fs_stat(path)
  return st ~= nil and st.type == 'directory'
end

function M.normalize(path)
  if not path or path == '' then
    return path
  end
  path = vim.fn.fnamemodify(path, ':p')
  if #path > 1 then
    path = path:gsub('/+$', '')
  end
  return path
end

return M
