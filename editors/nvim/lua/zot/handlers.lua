-- Handlers for what zot lsp sends: zot/event, zot/notify, zot/reviewEdit,
-- zot/save, zot/panel/*, zot/extensions/changed, workspace/applyEdit,
-- window/showMessage(Request) and $/progress. They are the zot client's
-- own (start_client's `handlers`), never global.
local P = require('zot.protocol')
local util = require('zot.util')

local M = {}

local levels = vim.log.levels

local function state_of(ctx)
  return require('zot.client').by_id[ctx.client_id]
end

local notify_levels = {
  info = levels.INFO,
  success = levels.INFO,
  warn = levels.WARN,
  warning = levels.WARN,
  error = levels.ERROR,
}

---@param params zot.NotifyParams
function M.notify(_, params, _)
  params = params or {}
  local ext, msg = params.extension or 'zot', tostring(params.message or '')
  util.notify('[' .. ext .. '] ' .. msg, notify_levels[params.level or 'info'] or levels.INFO)
end

local message_levels = { [1] = levels.ERROR, [2] = levels.WARN, [3] = levels.INFO, [4] = levels.DEBUG }

function M.show_message(_, params, _)
  params = params or {}
  local msg = tostring(params.message or '')
  util.notify(msg, message_levels[params.type] or levels.INFO)
  return vim.NIL
end

-- window/showMessageRequest (bash approvals, writes outside the workspace,
-- extension trust): the whole message in a float and vim.ui.select (see
-- zot.approval) when the handler may wait, else Neovim's own (blocking)
-- prompt.
function M.show_message_request(err, params, ctx, cfg)
  params = params or {}
  local actions = util.val(params.actions) or {}
  local async, choice = util.await(function(resolve)
    local titles = {}
    for _, a in ipairs(actions) do
      titles[#titles + 1] = a.title
    end
    if #titles == 0 then
      util.notify(params.message or '', message_levels[params.type] or levels.INFO)
      resolve(nil)
      return
    end
    require('zot.approval').ask(tostring(params.message or ''), titles, function(idx)
      resolve(idx and actions[idx] or nil)
    end)
  end)
  if async then
    return choice or vim.NIL
  end
  return vim.lsp.handlers[P.lsp.show_message_request](err, params, ctx, cfg)
end

--- zot/event: one event of a run (docs/protocol.md, "Events").
---@param params table
function M.event(_, params, ctx)
  local st = state_of(ctx)
  if st and params then
    require('zot.chat').on_event(st, params)
  end
end

-- ---------------------------------------------------------------- edits --

--- The version Neovim last sent for bufnr (didOpen/didChange).
local function buf_version(bufnr)
  local versions = vim.lsp.util.buf_versions
  local v = versions and versions[bufnr]
  if v == nil and vim.api.nvim_buf_is_loaded(bufnr) and vim.fn.has('nvim-0.11') == 1 then
    v = vim.b[bufnr].changedtick
  end
  return v
end

--- Starts a new undo block in bufnr, so each zot edit is undone on its own.
local function break_undo(bufnr)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    pcall(vim.api.nvim_buf_call, bufnr, function()
      vim.cmd('let &l:undolevels = &l:undolevels')
    end)
  end
end

function M.apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local st = state_of(ctx)
  if not client or not params or not params.edit then
    return { applied = false, failureReason = 'no edit' }
  end
  local edit = params.edit
  local uris = {}
  local created = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and created[change.textDocument.uri] then
      -- The text of a file zot creates: Neovim's buffer keeps the final
      -- newline in 'eol', not as an extra empty line.
      local t = ''
      for _, e in ipairs(change.edits or {}) do
        t = t .. (e.newText or '')
      end
      created[change.textDocument.uri] = t
      uris[#uris + 1] = change.textDocument.uri
    elseif change.textDocument then
      local uri = change.textDocument.uri
      uris[#uris + 1] = uri
      local version = util.val(change.textDocument.version)
      local bufnr = vim.uri_to_bufnr(uri)
      local cur = buf_version(bufnr)
      if version and cur and vim.api.nvim_buf_is_loaded(bufnr) and cur ~= version then
        -- Neovim would skip the edit silently and answer applied=true.
        return {
          applied = false,
          failureReason = string.format('the buffer is at version %d, the edit is for %d', cur, version),
        }
      end
    elseif change.kind == 'create' then
      local fname = vim.uri_to_fname(change.uri)
      vim.fn.mkdir(vim.fn.fnamemodify(fname, ':h'), 'p')
      local b = vim.fn.bufnr(fname)
      local empty = b < 0
        or not vim.api.nvim_buf_is_loaded(b)
        or (vim.api.nvim_buf_line_count(b) == 1 and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == '')
      if empty and vim.fn.filereadable(fname) == 0 then
        created[change.uri] = true
      end
    end
  end
  for uri in pairs(edit.changes or {}) do
    uris[#uris + 1] = uri
  end
  for _, uri in ipairs(uris) do
    break_undo(vim.uri_to_bufnr(uri))
  end
  local ok, e = pcall(vim.lsp.util.apply_workspace_edit, edit, client.offset_encoding or 'utf-16')
  if not ok then
    return { applied = false, failureReason = tostring(e) }
  end
  for uri, text in pairs(created) do
    local b = vim.uri_to_bufnr(uri)
    if type(text) == 'string' and vim.api.nvim_buf_is_loaded(b) then
      local n = vim.api.nvim_buf_line_count(b)
      if text:sub(-1) == '\n' then
        if n > 1 and vim.api.nvim_buf_get_lines(b, n - 1, n, false)[1] == '' then
          vim.api.nvim_buf_set_lines(b, n - 1, n, false, {})
        end
        vim.bo[b].eol = true
      elseif text ~= '' then
        vim.bo[b].eol = false
        vim.bo[b].fixeol = false
      end
    end
  end
  -- Buffers zot opened for the edit join the client (didOpen), so zot
  -- reads and saves what the editor holds.
  if st then
    for _, uri in ipairs(uris) do
      local bufnr = vim.uri_to_bufnr(uri)
      if vim.api.nvim_buf_is_loaded(bufnr) then
        require('zot.client').attach(st, bufnr)
      end
    end
    require('zot.chat').on_edit(st, uris)
  end
  return { applied = true }
end

---@param params zot.SaveParams
---@return zot.SaveResult
function M.save(_, params, _)
  local saved, failed = {}, {}
  for _, uri in ipairs((params and params.uris) or {}) do
    local bufnr = vim.uri_to_bufnr(uri)
    local fname = vim.uri_to_fname(uri)
    if not vim.api.nvim_buf_is_loaded(bufnr) then
      failed[#failed + 1] = { uri = uri, reason = 'the buffer is not loaded in Neovim' }
    elseif not vim.bo[bufnr].modified and vim.fn.filereadable(fname) == 1 then
      saved[#saved + 1] = uri
    else
      vim.fn.mkdir(vim.fn.fnamemodify(fname, ':h'), 'p')
      local ok, e = pcall(vim.api.nvim_buf_call, bufnr, function()
        vim.cmd('silent keepalt keepjumps write!')
      end)
      if ok and not vim.bo[bufnr].modified then
        saved[#saved + 1] = uri
      else
        failed[#failed + 1] = { uri = uri, reason = ok and 'not written' or tostring(e) }
      end
    end
  end
  local written = {}
  for _, r in ipairs((params and params.rebased) or {}) do
    local ok, reason = M.write_rebased(r.uri, r.text)
    if ok then
      written[#written + 1] = r.uri
    else
      failed[#failed + 1] = { uri = r.uri, reason = reason }
    end
  end
  local res = { saved = saved }
  if #written > 0 then
    res.written = written
  end
  if #failed > 0 then
    res.failed = failed
  end
  return res
end

-- lines_of splits a file's text into buffer lines for bufnr's
-- 'fileformat'; eol tells whether it ends with a line break.
local function lines_of(bufnr, text)
  local eol = text:sub(-1) == '\n'
  if eol then
    text = text:sub(1, -2)
  end
  local lines = vim.split(text, '\n', { plain = true })
  if vim.bo[bufnr].fileformat == 'dos' then
    for i, l in ipairs(lines) do
      lines[i] = l:gsub('\r$', '')
    end
  end
  return lines, eol
end

-- set_lines turns bufnr's lines into want with the fewest line changes,
-- so marks, folds and the cursor away from the changes stay put.
local function set_lines(bufnr, want)
  local have = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local a, b = table.concat(have, '\n') .. '\n', table.concat(want, '\n') .. '\n'
  local hunks = vim.diff(a, b, { result_type = 'indices' })
  for i = #hunks, 1, -1 do
    local sa, ca, sb, cb = unpack(hunks[i])
    local first = ca == 0 and sa or sa - 1
    vim.api.nvim_buf_set_lines(bufnr, first, first + ca, false, vim.list_slice(want, sb, sb + cb - 1))
  end
end

--- write_rebased writes text (the saved file plus zot's changes) to the
--- file of uri's buffer, which holds the user's unsaved changes as well,
--- and keeps those: the buffer is set to text, written by Neovim (so
--- Neovim knows the file as saved: `:checktime` does not reload and a later
--- `:w` does not ask "The file has been changed since reading it"), and
--- set back to the user's text in the same undo block, still modified.
--- The write runs without autocommands: it is zot's write of its own
--- changes, not the user saving (no formatters, no didSave).
---@return boolean ok, string? reason
function M.write_rebased(uri, text)
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return false, 'the buffer is not loaded in Neovim'
  end
  if not vim.bo[bufnr].modifiable then
    return false, "the buffer is not 'modifiable'"
  end
  local user = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local eol, fixeol = vim.bo[bufnr].eol, vim.bo[bufnr].fixeol
  local disk, disk_eol = lines_of(bufnr, text)
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    views[win] = vim.api.nvim_win_call(win, vim.fn.winsaveview)
  end
  -- The round trip joins the last undo block (zot's edit or the user's
  -- typing), whether or not Neovim closed it since: `u` never stops at a
  -- state the user did not have.
  break_undo(bufnr)
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    pcall(vim.cmd, 'undojoin')
    set_lines(bufnr, disk)
    vim.bo[bufnr].eol = disk_eol
    if not disk_eol then
      vim.bo[bufnr].fixeol = false
    end
    vim.cmd('silent noautocmd keepalt keepjumps write')
  end)
  local written = ok and not vim.bo[bufnr].modified
  pcall(vim.api.nvim_buf_call, bufnr, function()
    pcall(vim.cmd, 'undojoin')
    set_lines(bufnr, user)
  end)
  vim.bo[bufnr].eol, vim.bo[bufnr].fixeol = eol, fixeol
  for win, view in pairs(views) do
    pcall(vim.api.nvim_win_call, win, function()
      vim.fn.winrestview(view)
    end)
  end
  if not written then
    return false, ok and 'not written' or tostring(err)
  end
  return true
end

---@param params zot.ReviewEditParams
---@return zot.ReviewEditResult
function M.review(_, params, ctx)
  local st = state_of(ctx)
  local async, res = util.await(function(resolve)
    require('zot.review').open(st, params or {}, resolve)
  end)
  if async then
    return res
  end
  return require('zot.review').blocking(st, params or {})
end

-- --------------------------------------------------------------- panels --

-- panel_handler calls zot.panel's fn with the client's state and params.
local function panel_handler(fn)
  return function(_, params, ctx)
    local st = state_of(ctx)
    if st and params then
      fn(require('zot.panel'), st, params)
    end
  end
end

M.panel_open = panel_handler(function(panel, st, params)
  panel.open(st, params)
end)
M.panel_render = panel_handler(function(panel, st, params)
  panel.render(st, params)
end)
M.panel_close = panel_handler(function(panel, st, params)
  panel.close(st, params.panelId, false)
end)

---@param params zot.ExtensionsResult
function M.extensions_changed(_, params, ctx)
  local st = state_of(ctx)
  if st and params then
    require('zot.client').extensions_changed(st, params)
  end
end

--- zot/session/changed: an extension forked the conversation or moved it
--- in the session tree.
---@param params zot.SessionChangedParams
function M.session_changed(_, params, ctx)
  local st = state_of(ctx)
  if st and params then
    require('zot').session_changed(st, params)
  end
end

--- zot/input/set: an extension sets the chat's input (zot.input).
---@param params zot.InputSetParams
function M.input_set(_, params, ctx)
  local st = state_of(ctx)
  if st and params then
    require('zot.input').set_from_extension(st.root, util.val(params.text) or '', util.val(params.mode))
  end
end

--- zot/input/get: the chat input's text.
function M.input_get(_, _, ctx)
  local st = state_of(ctx)
  return { text = st and require('zot.input').text_of(st.root) or '' }
end

function M.progress(err, params, ctx, cfg)
  local default = vim.lsp.handlers[P.lsp.progress]
  if default then
    pcall(default, err, params, ctx, cfg)
  end
  local st = state_of(ctx)
  if st and params and type(params.value) == 'table' then
    require('zot.chat').on_progress(st, params.value)
  end
end

function M.progress_create(_, params, ctx, cfg)
  local default = vim.lsp.handlers[P.lsp.progress_create]
  if default then
    pcall(default, nil, params, ctx, cfg)
  end
  return vim.NIL
end

function M.build()
  return {
    [P.server_notification.event] = M.event,
    [P.server_notification.notify] = M.notify,
    [P.server_request.review_edit] = M.review,
    [P.server_request.save] = M.save,
    [P.server_request.ui_request] = require('zot.extui').request,
    [P.server_notification.ui_status] = require('zot.extui').status,
    [P.server_notification.ui_widget] = require('zot.extui').widget,
    [P.lsp.cancel_request] = require('zot.extui').cancel,
    [P.server_notification.panel_open] = M.panel_open,
    [P.server_notification.panel_render] = M.panel_render,
    [P.server_notification.panel_close] = M.panel_close,
    [P.server_notification.extensions_changed] = M.extensions_changed,
    [P.server_notification.session_changed] = M.session_changed,
    [P.server_notification.input_set] = M.input_set,
    [P.server_request.input_get] = M.input_get,
    [P.lsp.apply_edit] = M.apply_edit,
    [P.lsp.show_message] = M.show_message,
    [P.lsp.show_message_request] = M.show_message_request,
    [P.lsp.log_message] = function()
      return vim.NIL
    end,
    [P.lsp.progress] = M.progress,
    [P.lsp.progress_create] = M.progress_create,
  }
end

return M
