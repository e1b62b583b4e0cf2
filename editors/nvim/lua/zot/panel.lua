-- Extension panels (zot/panel/open|render|close) as floating windows with
-- a title and a footer. Keys typed in the float go to the extension as
-- zot/panel/key with zot's key names: every printable key (q and : too) is
-- the extension's. <Esc> and <C-c> close the panel as zot's terminal UI
-- does: zot tells the extension (panel_close) and answers zot/panel/close,
-- which closes the float. <C-w> still leaves it; closing the float another
-- way (:q) sends zot/panel/closed.
local P = require('zot.protocol')
local compat = require('zot.compat')
local config = require('zot.config')

local api = vim.api

local M = {}

--- "<state id>:<panelId>" -> panel
M.panels = {}

local hl_ns = api.nvim_create_namespace('zot_panel')

-- Neovim key -> zot key name.
M.named_keys = {
  ['<Up>'] = 'up',
  ['<Down>'] = 'down',
  ['<Left>'] = 'left',
  ['<Right>'] = 'right',
  ['<CR>'] = 'enter',
  ['<Tab>'] = 'tab',
  ['<PageUp>'] = 'pageup',
  ['<PageDown>'] = 'pagedown',
  ['<Home>'] = 'home',
  ['<End>'] = 'end',
  ['<BS>'] = 'backspace',
  ['<Del>'] = 'delete',
}

-- Keys zot answers by closing the panel.
local close_keys = { ['<Esc>'] = 'esc', ['<C-c>'] = 'ctrl+c' }

-- lhs for a printable ASCII character.
local special_lhs = { [' '] = '<Space>', ['<'] = '<lt>', ['|'] = '<Bar>', ['\\'] = '<Bslash>' }

local function key_of(state, id)
  return tostring(state.id) .. ':' .. tostring(id)
end

local function width_of(s)
  return vim.fn.strdisplaywidth(s or '')
end

local function clean(lines)
  local out = {}
  for _, l in ipairs(lines or {}) do
    if type(l) ~= 'string' then
      l = tostring(l)
    end
    for _, part in ipairs(compat.split(l:gsub('\r', ''), '\n')) do
      out[#out + 1] = part
    end
  end
  return out
end

-- The buffer lines and the float size of a panel. Without native float
-- titles/footers (Neovim < 0.9 / 0.10) they are drawn inside the float.
local function layout(p)
  local body = clean(p.lines)
  if #body == 0 then
    body = { '' }
  end
  local w = 20
  for _, l in ipairs(body) do
    w = math.max(w, width_of(l))
  end
  w = math.max(w, width_of(p.title) + 4, width_of(p.footer) + 4)
  w = math.min(w + 2, math.max(20, vim.o.columns - 6))
  local lines = {}
  local title_row, footer_row
  if not compat.has_float_title and (p.title or '') ~= '' then
    lines[#lines + 1] = ' ' .. p.title
    lines[#lines + 1] = string.rep('─', w)
    title_row = 0
  end
  local first = #lines
  for _, l in ipairs(body) do
    lines[#lines + 1] = ' ' .. l
  end
  if not compat.has_float_footer and (p.footer or '') ~= '' then
    lines[#lines + 1] = string.rep('─', w)
    lines[#lines + 1] = ' ' .. p.footer
    footer_row = #lines - 1
  end
  local h = math.min(#lines, math.max(3, vim.o.lines - 6))
  return lines, w, h, first, title_row, footer_row
end

local function win_config(p, w, h)
  local cfg = {
    relative = 'editor',
    width = w,
    height = h,
    row = math.max(0, math.floor((vim.o.lines - h) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - w) / 2)),
    border = config.get().panel.border,
    style = 'minimal',
  }
  if compat.has_float_title and (p.title or '') ~= '' then
    cfg.title = ' ' .. p.title .. ' '
    cfg.title_pos = 'center'
  end
  if compat.has_float_footer and (p.footer or '') ~= '' then
    cfg.footer = ' ' .. p.footer .. ' '
    cfg.footer_pos = 'center'
  end
  return cfg
end

local function draw(panel)
  local p = panel.view
  local lines, w, h, first, title_row, footer_row = layout(p)
  local buf = panel.buf
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  api.nvim_buf_clear_namespace(buf, hl_ns, 0, -1)
  if title_row then
    api.nvim_buf_add_highlight(buf, hl_ns, 'Title', title_row, 0, -1)
    api.nvim_buf_add_highlight(buf, hl_ns, 'FloatBorder', title_row + 1, 0, -1)
  end
  if footer_row then
    api.nvim_buf_add_highlight(buf, hl_ns, 'FloatBorder', footer_row - 1, 0, -1)
    api.nvim_buf_add_highlight(buf, hl_ns, 'Comment', footer_row, 0, -1)
  end
  panel.first = first
  if panel.win and api.nvim_win_is_valid(panel.win) then
    local cfg = win_config(p, w, h)
    pcall(api.nvim_win_set_config, panel.win, cfg)
  end
  return w, h
end

local function send_key(panel, key, text)
  local params = { panelId = panel.id, key = key }
  if text then
    params.text = text
  end
  require('zot.client').notify(panel.state, P.notification.panel_key, params)
end

local function map_keys(panel)
  local buf = panel.buf
  local opts = { buffer = buf, silent = true, nowait = true }
  for lhs, name in pairs(M.named_keys) do
    vim.keymap.set('n', lhs, function()
      send_key(panel, name)
    end, opts)
  end
  for c = 32, 126 do
    local ch = string.char(c)
    vim.keymap.set('n', special_lhs[ch] or ch, function()
      send_key(panel, 'rune', ch)
    end, opts)
  end
  for lhs, name in pairs(close_keys) do
    vim.keymap.set('n', lhs, function()
      send_key(panel, name)
    end, opts)
  end
end

function M.open(state, p)
  local k = key_of(state, p.panelId)
  local existing = M.panels[k]
  if existing and existing.win and api.nvim_win_is_valid(existing.win) then
    return M.render(state, p)
  end
  local panel = { state = state, id = p.panelId, extension = p.extension, view = p, closing = false }
  M.panels[k] = panel
  local buf = api.nvim_create_buf(false, true)
  panel.buf = buf
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'zotpanel'
  api.nvim_buf_set_var(buf, 'zot_root', state.root)
  api.nvim_buf_set_var(buf, 'zot_panel', p.panelId)
  local w, h = draw(panel)
  panel.prev_win = api.nvim_get_current_win()
  panel.win = api.nvim_open_win(buf, true, win_config(p, w, h))
  vim.wo[panel.win].cursorline = false
  vim.wo[panel.win].wrap = false
  pcall(api.nvim_win_set_cursor, panel.win, { panel.first + 1, 0 })
  map_keys(panel)
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      -- Closed some other way (:q, :close …): tell the extension.
      if not panel.closing then
        panel.closing = true
        M.panels[k] = nil
        require('zot.client').notify(
          state,
          P.notification.panel_closed,
          { panelId = panel.id, extension = panel.extension }
        )
      end
    end,
  })
  pcall(api.nvim_exec_autocmds, 'User', { pattern = 'ZotPanel', modeline = false })
  return panel
end

function M.render(state, p)
  local panel = M.panels[key_of(state, p.panelId)]
  if not panel then
    return M.open(state, p)
  end
  local v = panel.view
  panel.view = {
    panelId = p.panelId,
    extension = p.extension or v.extension,
    title = p.title or v.title,
    lines = p.lines or v.lines,
    footer = p.footer or v.footer,
  }
  panel.renders = (panel.renders or 0) + 1
  if api.nvim_buf_is_valid(panel.buf) then
    draw(panel)
  end
end

--- Closes a panel; by_user also tells zot (zot/panel/closed).
function M.close(state, id, by_user)
  local k = key_of(state, id)
  local panel = M.panels[k]
  if not panel then
    return
  end
  M.panels[k] = nil
  panel.closing = true
  if by_user then
    require('zot.client').notify(
      state,
      P.notification.panel_closed,
      { panelId = panel.id, extension = panel.extension }
    )
  end
  if panel.win and api.nvim_win_is_valid(panel.win) then
    pcall(api.nvim_win_close, panel.win, true)
  end
  if api.nvim_buf_is_valid(panel.buf) then
    pcall(api.nvim_buf_delete, panel.buf, { force = true })
  end
  if panel.prev_win and api.nvim_win_is_valid(panel.prev_win) then
    pcall(api.nvim_set_current_win, panel.prev_win)
  end
end

function M.close_all(state)
  for _, panel in pairs(vim.tbl_extend('force', {}, M.panels)) do
    if panel.state == state then
      panel.closing = true
      M.close(state, panel.id, false)
    end
  end
end

--- The open panel with this id (any client), for scripts and tests.
function M.find(id)
  for _, panel in pairs(M.panels) do
    if panel.id == id then
      return panel
    end
  end
end

--- Shows read-only text in a float (:ZotExtensions). q/<Esc> close it.
function M.show(title, lines, footer)
  local view = { title = title, lines = lines, footer = footer or 'q close' }
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  local panel = { buf = buf, view = view }
  local w, h = draw(panel)
  local win = api.nvim_open_win(buf, true, win_config(view, w, h))
  for _, lhs in ipairs(close_keys) do
    vim.keymap.set('n', lhs, function()
      pcall(api.nvim_win_close, win, true)
    end, { buffer = buf, silent = true, nowait = true })
  end
  return win, buf
end

return M
