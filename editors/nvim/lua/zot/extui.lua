-- Extensions that ask the user and show state (docs/protocol.md,
-- zot/ui/*): zot/ui/request through vim.ui.select / vim.ui.input (confirm
-- is a Yes/No select; editor a scratch buffer in a float, M.edit); zot/ui/status kept per client for
-- require("zot").statusline() and shown in the chat window's bar (winbar,
-- or its statusline before 0.8); zot/ui/widget kept per client for
-- require("zot").widget_lines() and drawn as virtual lines at the bottom
-- of the chat buffer. Updates are drawn once per event-loop turn.
local util = require('zot.util')

local M = {}

--- Confirm choices.
M.YES = 'Yes'
M.NO = 'No'

local function prompt_of(params)
  local title, msg = tostring(params.title or ''), tostring(params.message or '')
  local p = '[' .. tostring(params.extension or 'zot') .. '] ' .. title
  if msg ~= '' then
    p = p .. (title ~= '' and ': ' or '') .. msg
  end
  return p
end

-- Open dialogs by client id and JSON-RPC id, so $/cancelRequest (the
-- extension's timeout passed, the run was aborted, the extension died)
-- closes them.
local pending = {}
-- The builtin vim.ui.input prompts open now, innermost last.
local cmdlines = {}

local function is_builtin(fn)
  local info = type(fn) == 'function' and debug.getinfo(fn, 'S')
  return info and info.source:match('vim[/\\]ui%.lua$') ~= nil or false
end

local function float_wins()
  local set = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then
      set[w] = true
    end
  end
  return set
end

--- zot's own choice dialog, used where vim.ui.select is Neovim's builtin
--- (an inputlist that blocks the editor and cannot be closed): a float
--- with the whole question and numbered options. <CR> or a digit picks,
--- q or <Esc> (or closing the window) dismisses.
--- Returns the float's window and a function closing it as dismissed.
function M.pick(prompt, items, default, on_choice)
  local lines = vim.split(prompt, '\n', { plain = true })
  lines[#lines + 1] = ''
  local first = #lines + 1
  local at = first
  for i, it in ipairs(items) do
    lines[#lines + 1] = string.format('%d. %s', i, tostring(it))
    if it == default then
      at = first + i - 1
    end
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'zotdialog'
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 1)
  end
  width = math.max(1, math.min(width, vim.o.columns - 4))
  local height = 0
  for _, l in ipairs(lines) do
    height = height + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  height = math.max(1, math.min(height, vim.o.lines - 4))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2) - 1),
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
  })
  vim.wo[win].wrap = true
  vim.wo[win].cursorline = true
  pcall(vim.api.nvim_win_set_cursor, win, { at, 0 })
  local done = false
  local function finish(choice, idx)
    if done then
      return
    end
    done = true
    if vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_close, win, true)
    end
    on_choice(choice, idx)
  end
  local function map(lhs, f)
    vim.keymap.set('n', lhs, f, { buffer = buf, nowait = true, silent = true })
  end
  map('<CR>', function()
    local i = vim.api.nvim_win_get_cursor(0)[1] - first + 1
    if items[i] ~= nil then
      finish(items[i], i)
    end
  end)
  for i = 1, math.min(9, #items) do
    map(tostring(i), function()
      finish(items[i], i)
    end)
  end
  map('q', function()
    finish(nil, nil)
  end)
  map('<Esc>', function()
    finish(nil, nil)
  end)
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        finish(nil, nil)
      end)
    end,
  })
  return win, function()
    finish(nil, nil)
  end
end

--- An extension's multi-line text (zot/ui/request kind editor, pi's
--- ctx.ui.editor): a scratch buffer in a float, prefilled with default.
--- :w answers its text, q in normal mode (or closing the window)
--- dismisses it. Returns the float's window and a function closing it as
--- dismissed.
function M.edit(prompt, default, on_done)
  local buf = vim.api.nvim_create_buf(false, true)
  M.edits = (M.edits or 0) + 1
  pcall(vim.api.nvim_buf_set_name, buf, 'zot://editor/' .. M.edits)
  vim.bo[buf].buftype = 'acwrite'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(default or '', '\n', { plain = true }))
  vim.bo[buf].modified = false
  local width = math.max(20, math.min(100, vim.o.columns - 4))
  local height = math.max(3, math.min(15, vim.o.lines - 6))
  local title = prompt .. '  (:w done, q cancel)'
  local cfg = {
    relative = 'editor',
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2) - 1),
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
  }
  if vim.fn.has('nvim-0.9') == 1 then
    cfg.title = title:sub(1, width - 2)
  end
  local win = vim.api.nvim_open_win(buf, true, cfg)
  vim.wo[win].wrap = true
  if vim.fn.has('nvim-0.9') == 0 then
    vim.api.nvim_echo({ { title } }, false, {})
  end
  local done = false
  local function finish(text)
    if done then
      return
    end
    done = true
    if vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_close, win, true)
    end
    if vim.api.nvim_get_mode().mode:sub(1, 1) == 'i' then
      vim.cmd('stopinsert')
    end
    on_done(text)
  end
  vim.api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
      vim.bo[buf].modified = false
      vim.schedule(function()
        finish(text)
      end)
    end,
  })
  vim.keymap.set('n', 'q', function()
    finish(nil)
  end, { buffer = buf, nowait = true, silent = true })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        finish(nil)
      end)
    end,
  })
  return win, function()
    finish(nil)
  end
end

local function select(dialog, items, opts, on_choice)
  if is_builtin(vim.ui.select) then
    dialog.own_win, dialog.close = M.pick(opts.prompt, items, opts.default, on_choice)
  else
    vim.ui.select(items, opts, on_choice)
  end
end

--- zot/ui/request: answers {value = …} or {cancelled = true}.
---@param params zot.UIRequestParams
function M.request(_, params, ctx)
  params = params or {}
  local kind = params.kind
  local id = require('zot.rpc').request_id
  local client = ctx and ctx.client_id
  local dialog = { wins = {} }
  local async, res = util.await(function(resolve)
    function dialog.answer(r)
      if dialog.done then
        return
      end
      dialog.done = true
      if id ~= nil and client and pending[client] then
        pending[client][id] = nil
      end
      resolve(r)
    end
    if id ~= nil and client then
      pending[client] = pending[client] or {}
      pending[client][id] = dialog
    end
    local before = float_wins()
    local prompt = prompt_of(params)
    if kind == 'confirm' then
      -- No first: the preselected choice lets nothing happen.
      select(dialog, { M.NO, M.YES }, { prompt = prompt .. ' ' }, function(choice)
        if choice == nil then
          dialog.answer({ cancelled = true })
        else
          dialog.answer({ value = choice == M.YES })
        end
      end)
    elseif kind == 'select' then
      local options = util.val(params.options) or {}
      select(dialog, options, { prompt = prompt .. ' ', default = util.val(params.default) }, function(choice)
        dialog.answer(choice and { value = choice } or { cancelled = true })
      end)
    elseif kind == 'input' then
      local default = util.val(params.default)
      -- The builtin input blocks here in the command line; events (a
      -- $/cancelRequest) still run meanwhile.
      dialog.cmdline = is_builtin(vim.ui.input)
      if dialog.cmdline then
        cmdlines[#cmdlines + 1] = dialog
      end
      vim.ui.input({ prompt = prompt .. ' ', default = default }, function(text)
        dialog.answer(text and { value = text } or { cancelled = true })
      end)
      if dialog.cmdline then
        for i = #cmdlines, 1, -1 do
          if cmdlines[i] == dialog then
            table.remove(cmdlines, i)
          end
        end
        dialog.cmdline = false
      end
    elseif kind == 'editor' then
      dialog.own_win, dialog.close = M.edit(prompt, util.val(params.default), function(text)
        dialog.answer(text and { value = text } or { cancelled = true })
      end)
    else
      dialog.answer({ cancelled = true })
    end
    -- Floats a vim.ui.select / vim.ui.input replacement opened for this
    -- dialog: closed if zot cancels it.
    for w in pairs(float_wins()) do
      if not before[w] and w ~= dialog.own_win then
        dialog.wins[#dialog.wins + 1] = w
      end
    end
  end)
  if not async then
    -- The builtin transport before 0.10 cannot wait: say no UI.
    return { cancelled = true }
  end
  return res
end

local function close(dialog)
  if dialog.done then
    return
  end
  dialog.answer({ cancelled = true })
  if dialog.close then
    dialog.close()
  end
  local closed = false
  for _, w in ipairs(dialog.wins) do
    if vim.api.nvim_win_is_valid(w) then
      closed = pcall(vim.api.nvim_win_close, w, true) or closed
    end
  end
  if closed and vim.api.nvim_get_mode().mode:sub(1, 1) == 'i' then
    -- A picker's prompt buffer left insert mode behind.
    vim.cmd('stopinsert')
  end
  if dialog.cmdline and cmdlines[#cmdlines] == dialog and vim.fn.getcmdtype() == '@' then
    -- The innermost input() prompt is this dialog's: leave it as <Esc> does.
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Esc>', true, false, true), 'n', false)
  end
end

--- $/cancelRequest: zot no longer wants the answer to a zot/ui/request
--- (the extension's timeout passed, the run was aborted, the extension
--- died): its dialog closes. Needs zot's transport (the default): Neovim's
--- own does not tell handlers the request id.
function M.cancel(_, params, ctx)
  local by = ctx and pending[ctx.client_id]
  local id = params and util.val(params.id)
  local dialog = by and id ~= nil and by[id]
  if dialog then
    close(dialog)
  end
end

--- Closes every open dialog of a client (it stopped).
function M.close_all(client_id)
  local by = pending[client_id]
  pending[client_id] = nil
  for _, dialog in pairs(by or {}) do
    close(dialog)
  end
end

local function state_of(ctx)
  return require('zot.client').by_id[ctx.client_id]
end

-- Draws a client's status and widgets in its chat: once per event-loop
-- turn however many updates came in it (an extension may send many).
local function redraw(st)
  if st.ext_redraw then
    return
  end
  st.ext_redraw = true
  vim.schedule(function()
    st.ext_redraw = false
    local chat = require('zot.chat')
    local c = chat.get(st.root, false)
    if c then
      chat.update_bar(c)
    end
    chat.set_widgets(st.root, M.widget_lines(st))
    pcall(vim.cmd, 'redrawstatus!')
  end)
end

--- zot/ui/status: text under (extension, key); null removes it.
---@param params zot.UIStatusParams
function M.status(_, params, ctx)
  local st = state_of(ctx)
  if not st or not params then
    return
  end
  st.ext_status = st.ext_status or {}
  local k = tostring(params.extension) .. '/' .. tostring(params.key)
  st.ext_status[k] = util.val(params.text)
  redraw(st)
end

--- zot/ui/widget: lines under (extension, key); null removes them.
---@param params zot.UIWidgetParams
function M.widget(_, params, ctx)
  local st = state_of(ctx)
  if not st or not params then
    return
  end
  st.ext_widgets = st.ext_widgets or {}
  local k = tostring(params.extension) .. '/' .. tostring(params.key)
  local lines = util.val(params.lines)
  st.ext_widgets[k] = type(lines) == 'table' and #lines > 0 and lines or nil
  redraw(st)
end

--- zot exited: its extensions' status and widgets go with it.
function M.forget(st)
  if st.ext_status == nil and st.ext_widgets == nil then
    return
  end
  st.ext_status, st.ext_widgets = nil, nil
  redraw(st)
end

local function sorted(t)
  local keys = {}
  for k in pairs(t or {}) do
    keys[#keys + 1] = k
  end
  table.sort(keys)
  return keys
end

--- The extensions' status texts of a client, in key order.
function M.status_texts(st)
  local out = {}
  for _, k in ipairs(sorted(st and st.ext_status)) do
    out[#out + 1] = st.ext_status[k]
  end
  return out
end

--- The extensions' widget lines of a client, in key order.
function M.widget_lines(st)
  local out = {}
  for _, k in ipairs(sorted(st and st.ext_widgets)) do
    for _, l in ipairs(st.ext_widgets[k]) do
      out[#out + 1] = l
    end
  end
  return out
end

return M
