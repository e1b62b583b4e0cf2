-- One zot client per workspace root: started on first use, attached to the
-- root's file buffers (didOpen/didChange flow), stopped on VimLeavePre.
local compat = require('zot.compat')
local config = require('zot.config')
local util = require('zot.util')
local P = require('zot.protocol')

local M = {}

--- root -> state; client id -> state.
--- state = { id, root, pid, info, server_info, commands, extensions,
---           ready, waiters, stopping }
M.by_root = {}
M.by_id = {}

local group

-- ---------------------------------------------------------------- roots --

local function buf_path(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return nil
  end
  if vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  return compat.normalize(name)
end
M.buf_path = buf_path

local function under(path, root)
  if root == '/' then
    return path:sub(1, 1) == '/'
  end
  return path == root or path:sub(1, #root + 1) == root .. '/'
end

local function find_marker_root(dir)
  local markers = config.get().root_markers or {}
  local cur = dir
  while cur and cur ~= '' do
    for _, m in ipairs(markers) do
      if compat.uv.fs_stat(cur .. '/' .. m) then
        return cur
      end
    end
    local parent = vim.fn.fnamemodify(cur, ':h')
    if parent == cur then
      break
    end
    cur = parent
  end
  return nil
end

--- The workspace root for a buffer.
function M.root_for(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local okr, own = pcall(vim.api.nvim_buf_get_var, bufnr, 'zot_root')
  if okr and type(own) == 'string' and own ~= '' then
    return own -- the chat and zot's own buffers
  end
  local o = config.get()
  local r
  if type(o.root_dir) == 'function' then
    r = o.root_dir(bufnr)
  elseif type(o.root_dir) == 'string' then
    r = o.root_dir
  end
  if r and r ~= '' then
    return compat.normalize(r)
  end
  local cwd = compat.normalize(vim.fn.getcwd())
  local path = buf_path(bufnr)
  if not path then
    -- Not a file: the client already running for the cwd, else the cwd.
    return cwd
  end
  -- A running client whose root holds the file wins (the workspace's
  -- first chat: a file's commands go there, not to a :ZotChatNew chat).
  local best
  for root in pairs(M.by_root) do
    if not util.is_extra_chat(root) and under(path, root) and (not best or #root > #best) then
      best = root
    end
  end
  if best then
    return best
  end
  local found = find_marker_root(vim.fn.fnamemodify(path, ':h'))
  if found then
    return found
  end
  if under(path, cwd) then
    return cwd
  end
  return vim.fn.fnamemodify(path, ':h')
end

-- ------------------------------------------------------------ lifecycle --

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.general = caps.general or {}
  caps.general.positionEncodings = { 'utf-16' }
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  caps.workspace = caps.workspace or {}
  caps.workspace.applyEdit = true
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  caps.workspace.workspaceEdit.resourceOperations = { 'create', 'rename', 'delete' }
  -- notify: zot/notify is shown here, so zot sends no window/showMessage copy.
  -- ui: zot/ui/request, zot/ui/status and zot/ui/widget (zot.extui);
  -- editor: zot/ui/request kind editor (a scratch buffer in a float);
  -- input: zot/input/set and zot/input/get reach the chat's input (zot.input).
  caps.experimental = {
    zot = { reviewEdit = true, save = true, panels = true, notify = true, ui = true, input = true, editor = true },
  }
  return caps
end

--- zot's transport (zot.rpc) unless transport = "builtin": it lets review
--- and approval handlers wait for the user on every Neovim, and keeps the
--- UI responsive under thousands of events per second. Neovim's own
--- transport answers server requests synchronously before 0.10.
local function use_own_transport()
  local t = config.get().transport
  if t == 'builtin' then
    return false
  end
  return true
end

--- Runs f (which starts the client) with zot's transport: from 0.10 as
--- the documented function `cmd`; before, by lending vim.lsp.rpc.start to
--- zot.rpc while start_client spawns the process (synchronously).
local function with_transport(cfg, f)
  if not use_own_transport() then
    return f()
  end
  if compat.async_server_requests then
    local cmd, env, cwd = cfg.cmd, cfg.cmd_env, cfg.cmd_cwd
    cfg.cmd = function(dispatchers)
      return require('zot.rpc').start(cmd[1], vim.list_slice(cmd, 2), dispatchers, { cwd = cwd, env = env })
    end
    return f()
  end
  local rpcmod = require('vim.lsp.rpc')
  local orig = rpcmod.start
  rpcmod.start = require('zot.rpc').start
  local ok, a = pcall(f)
  rpcmod.start = orig
  if not ok then
    error(a, 0)
  end
  return a
end

local function attach(state, bufnr)
  if not state.id or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  if not compat.buf_is_attached(bufnr, state.id) then
    vim.lsp.buf_attach_client(bufnr, state.id)
  end
end
M.attach = attach

local function attach_all(state)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local p = buf_path(b)
    if p and under(p, util.dir_of(state.root)) and vim.api.nvim_buf_is_loaded(b) then
      attach(state, b)
    end
  end
end

--- Sessions of roots whose zot stopped unexpectedly: the next start
--- resumes it (the chat still shows it), as VS Code's client does.
M.resume_after_crash = {}

--- Remembers the client's session id (zot/state), for a restart after a crash.
function M.track_session(state)
  M.request(state, P.request.state, nil, function(err, res)
    if not err and res and res.session_id and res.session_id ~= '' then
      state.session_id = res.session_id
      -- The conversation to bring back next time (a session nobody wrote
      -- in is not one).
      if (tonumber(res.message_count) or 0) > 0 then
        require('zot.store').update(state.root, { session = res.session_id })
      end
    end
  end)
end

local function run_waiters(state)
  state.ready = true
  local waiters = state.waiters
  state.waiters = {}
  for _, w in ipairs(waiters) do
    local ok, e = pcall(w, state)
    if not ok then
      util.err(tostring(e))
    end
  end
end

local function on_ready(state)
  attach_all(state)
  if state.resumed_after_crash then
    require('zot.chat').note(
      state.root,
      string.format('zot stopped unexpectedly and was restarted; it resumed session %s.', state.resumed_after_crash)
    )
  end
  -- The last conversation comes back before the first prompt is sent.
  local finished = false
  local function finish()
    if not finished then
      finished = true
      M.track_session(state)
      run_waiters(state)
    end
  end
  local ok, e = pcall(require('zot').restore_last, state, finish)
  if not ok then
    util.err('restoring the last conversation: ' .. tostring(e))
    finish()
  end
end

local function forget(state)
  if M.by_root[state.root] == state then
    M.by_root[state.root] = nil
  end
  if state.id then
    M.by_id[state.id] = nil
  end
end

local function start(root, bufnr)
  local o = config.get()
  local cmd, source = config.server()
  if vim.fn.executable(cmd[1]) ~= 1 then
    util.err(
      string.format(
        '`%s` is not executable; install zot (:help zot-install) or set setup({ cmd = { "/path/to/zot", "lsp" } })',
        cmd[1]
      )
    )
    return nil
  end
  local state = { root = root, waiters = {}, commands = {}, extensions = nil, ready = false }
  -- root is the chat's key; dir the workspace (they differ for :ZotChatNew's chats).
  local dir = util.dir_of(root)
  M.by_root[root] = state
  local init = config.init_options()
  local resume = M.resume_after_crash[root]
  M.resume_after_crash[root] = nil
  if resume then
    init = vim.tbl_extend('force', vim.empty_dict(), init, { resume = resume })
    state.resumed_after_crash = resume
  end
  local before = {}
  for _, pid in ipairs(compat.children()) do
    before[pid] = true
  end
  local cfg = {
    name = 'zot',
    cmd = cmd,
    cmd_env = o.cmd_env,
    cmd_cwd = compat.is_dir(dir) and dir or nil,
    root_dir = dir,
    workspace_folders = { { uri = vim.uri_from_fname(dir), name = vim.fn.fnamemodify(dir, ':t') } },
    capabilities = capabilities(),
    init_options = init,
    handlers = require('zot.handlers').build(),
    offset_encoding = 'utf-16',
    -- exit_timeout=false: our VimLeavePre handler waits for the process itself.
    flags = { debounce_text_changes = o.debounce_text_changes, exit_timeout = false },
    on_init = function(client, result)
      local caps = result and result.capabilities or {}
      state.info = (caps.experimental or {}).zot or {}
      state.server_info = result and result.serverInfo or {}
      state.commands = state.info.commands or {}
      local mismatch = require('zot.handshake').check((caps.experimental or {}).zot, cmd[1], source)
      if mismatch then
        -- Nothing is asked of this zot: what waited for it is dropped,
        -- the user gets this one message, and the process is stopped.
        state.incompatible, state.waiters = mismatch, {}
        vim.schedule(function()
          util.notify(mismatch, vim.log.levels.ERROR)
          M.stop(state)
        end)
        return
      end
      vim.schedule(function()
        on_ready(state)
      end)
    end,
    on_exit = function(code, signal)
      vim.schedule(function()
        require('zot.extui').close_all(state.id)
        require('zot.extui').forget(state)
        forget(state)
        state.exited = true
        if not state.stopping and (code ~= 0 or (signal or 0) ~= 0) and state.session_id then
          M.resume_after_crash[state.root] = state.session_id
        end
        require('zot.chat').on_exit(state, code, signal)
        require('zot.panel').close_all(state)
        require('zot.review').cancel_all(state)
        if not state.stopping and code ~= 0 then
          util.notify(
            string.format('zot lsp exited (code %s, signal %s)', tostring(code), tostring(signal)),
            vim.log.levels.WARN
          )
        end
      end)
    end,
  }
  if not compat.is_dir(dir) then
    cfg.cmd_cwd = nil
  end
  local id = with_transport(cfg, function()
    local file = bufnr and buf_path(bufnr) and bufnr == vim.api.nvim_get_current_buf()
    if vim.lsp.start and file then
      return vim.lsp.start(cfg, {
        reuse_client = function()
          return false
        end,
      })
    end
    if vim.fn.has('nvim-0.11') == 1 then
      -- start_client is deprecated there; start without attaching.
      return vim.lsp.start(cfg, {
        attach = false,
        reuse_client = function()
          return false
        end,
      })
    end
    return vim.lsp.start_client(cfg)
  end)
  if not id then
    M.by_root[root] = nil
    util.err('could not start ' .. table.concat(cmd, ' '))
    return nil
  end
  state.id = id
  M.by_id[id] = state
  local c = compat.client(id)
  state.pid = c and c.rpc and c.rpc.pid
  if not state.pid then
    for _, pid in ipairs(compat.children()) do
      if not before[pid] then
        state.pid = pid
      end
    end
  end
  if bufnr and buf_path(bufnr) then
    attach(state, bufnr)
  end
  return state
end

--- The running client for a root, if any.
function M.get(root)
  local st = M.by_root[root]
  if st and st.id then
    local c = compat.client(st.id)
    if c and not compat.is_stopped(c) then
      return st
    end
    forget(st)
  end
  return nil
end

--- Calls f(state) once the client of root is initialized, starting it on
--- first use (bufnr, if a file of root, is attached at once).
function M.with_root(root, f, bufnr)
  local state = M.get(root) or start(root, bufnr)
  if not state then
    return
  end
  if bufnr and buf_path(bufnr) then
    attach(state, bufnr)
  end
  if state.ready then
    f(state)
  else
    table.insert(state.waiters, f)
  end
  return state
end

--- Calls f(state) once the client of bufnr's root is initialized.
function M.with(bufnr, f)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  return M.with_root(M.root_for(bufnr), f, bufnr)
end

--- Calls f() once zot has reported its extensions as started (the first
--- zot/extensions/changed without `loading`), at most after `timeout` ms:
--- extension commands do not exist before.
function M.when_extensions_ready(state, f, timeout)
  local e = state.extensions
  if e and not e.loading then
    return f()
  end
  state.ext_waiters = state.ext_waiters or {}
  local done = false
  local function run()
    if not done then
      done = true
      f()
    end
  end
  table.insert(state.ext_waiters, run)
  vim.defer_fn(run, timeout or 10000)
end

function M.extensions_changed(state, params)
  state.extensions = params
  require('zot').define_shortcut_plugs(params)
  if params.commands then
    state.commands = params.commands
  end
  if not params.loading and state.ext_waiters then
    local waiters = state.ext_waiters
    state.ext_waiters = nil
    for _, w in ipairs(waiters) do
      w()
    end
  end
end

--- The client of the current buffer's root if it is running (no start).
function M.current(bufnr)
  return M.get(M.root_for(bufnr or vim.api.nvim_get_current_buf()))
end

--- Every running client state.
function M.all()
  local out = {}
  for _, st in pairs(M.by_root) do
    if st.id and compat.client(st.id) then
      out[#out + 1] = st
    end
  end
  return out
end

function M.lsp(state)
  return state and state.id and compat.client(state.id)
end

--- Sends a request; cb(err, result).
function M.request(state, method, params, cb)
  local c = M.lsp(state)
  if not c then
    if cb then
      cb({ code = -32099, message = 'zot is not running' }, nil)
    end
    return false
  end
  local ok = compat.request(c, method, params == nil and vim.empty_dict() or params, function(err, result)
    if cb then
      cb(err, util.val(result))
    end
  end)
  if not ok and cb then
    cb({ code = -32099, message = 'zot is not running' }, nil)
  end
  return ok
end

--- A request that waits (bounded) for its answer.
function M.request_sync(state, method, params, timeout)
  local done, e, r = false, nil, nil
  M.request(state, method, params, function(err, result)
    done, e, r = true, err, result
  end)
  vim.wait(timeout or 5000, function()
    return done
  end, 10)
  if not done then
    return nil, { message = method .. ' timed out' }
  end
  return r, e
end

function M.notify(state, method, params)
  local c = M.lsp(state)
  if not c then
    return false
  end
  return compat.notify(c, method, params == nil and vim.empty_dict() or params)
end

--- Stops every client and waits (bounded) until their processes are gone.
function M.stop_all(timeout)
  timeout = timeout or config.get().stop_timeout
  local states = M.all()
  if #states == 0 then
    return true
  end
  for _, st in ipairs(states) do
    st.stopping = true
    local c = M.lsp(st)
    if c then
      pcall(compat.stop, c)
    end
  end
  local function gone()
    for _, st in ipairs(states) do
      local c = M.lsp(st)
      if c and not compat.is_stopped(c) then
        return false
      end
      if st.pid and compat.alive(st.pid) then
        return false
      end
    end
    return true
  end
  if vim.wait(timeout, gone, 20) then
    return true
  end
  -- Still running: SIGTERM (zot shuts its extensions down on it).
  for _, st in ipairs(states) do
    local c = M.lsp(st)
    if c then
      pcall(compat.stop, c, true)
    end
    if st.pid and compat.alive(st.pid) then
      pcall(compat.uv.kill, st.pid, 15)
    end
  end
  return vim.wait(2000, gone, 20)
end

function M.stop(state)
  if not state then
    return
  end
  state.stopping = true
  local c = M.lsp(state)
  if c then
    compat.stop(c)
  end
end

function M.setup_autocmds()
  if group then
    return
  end
  group = vim.api.nvim_create_augroup('zot', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufEnter' }, {
    group = group,
    callback = function(args)
      local p = buf_path(args.buf)
      if not p then
        return
      end
      local best
      for root, st in pairs(M.by_root) do
        if st.ready and not util.is_extra_chat(root) and under(p, root) and (not best or #root > #best.root) then
          best = st
        end
      end
      if best then
        attach(best, args.buf)
      end
      -- Every chat of the workspace has the file (its own zot reads it).
      for root, st in pairs(M.by_root) do
        if st.ready and util.is_extra_chat(root) and under(p, util.dir_of(root)) then
          attach(st, args.buf)
        end
      end
    end,
  })
  vim.api.nvim_create_autocmd('VimLeavePre', {
    group = group,
    callback = function()
      M.stop_all()
    end,
  })
end

M.under = under

return M
