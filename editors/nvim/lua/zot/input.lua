-- The chat's input buffer: a small multi-line markdown buffer below the
-- chat (as codecompanion, avante and CopilotChat have). <CR> in normal
-- mode or <C-s> sends it; <Up>/<Down> (or <C-p>/<C-n>) in normal mode walk
-- the prompt history. #buffer, #file:<path>, #selection, #diagnostics and
-- #mcp:<server>:<uri> in it attach context (zot.refs). Its draft and
-- history are kept per workspace (zot.store), across Neovim sessions.
local config = require('zot.config')
local store = require('zot.store')

local api = vim.api

local M = {}

--- root -> input = { root, buf, history, idx, stash }
M.inputs = {}

local function valid(inp)
  return inp and inp.buf and api.nvim_buf_is_valid(inp.buf)
end

function M.text(inp)
  return table.concat(api.nvim_buf_get_lines(inp.buf, 0, -1, false), '\n')
end

function M.set_text(inp, text)
  local lines = vim.split(text or '', '\n', { plain = true })
  api.nvim_buf_set_lines(inp.buf, 0, -1, false, lines)
  for _, w in ipairs(vim.fn.win_findbuf(inp.buf)) do
    local last = api.nvim_buf_line_count(inp.buf)
    pcall(api.nvim_win_set_cursor, w, { last, #lines[#lines] })
  end
end

--- Keeps the draft for the next Neovim.
function M.save_draft(inp)
  if valid(inp) then
    store.update(inp.root, { draft = M.text(inp) })
  end
end

--- The hint shown in the input window's bar.
function M.hint()
  local k = config.get().chat.keys
  return string.format(
    'prompt · %s or %s send · %s/%s history · #buffer #file:<path> #selection #diagnostics #mcp:<server>:<uri>',
    k.send_normal,
    k.send,
    k.history_prev,
    k.history_next
  )
end

-- ------------------------------------------------------------- history --

--- Shows the previous (older) prompt of the history; the text being
--- written is kept and comes back after the newest.
function M.history_prev(inp)
  if not inp.idx then
    -- Prompts sent elsewhere (:ZotPrompt, another Neovim) count too.
    local saved = store.get(inp.root).history
    inp.history = type(saved) == 'table' and saved or {}
  end
  local h = inp.history
  if #h == 0 then
    return
  end
  if not inp.idx then
    inp.stash = M.text(inp)
    inp.idx = #h
  elseif inp.idx > 1 then
    inp.idx = inp.idx - 1
  else
    return
  end
  M.set_text(inp, h[inp.idx])
end

function M.history_next(inp)
  if not inp.idx then
    return
  end
  if inp.idx < #inp.history then
    inp.idx = inp.idx + 1
    M.set_text(inp, inp.history[inp.idx])
  else
    inp.idx = nil
    M.set_text(inp, inp.stash or '')
    inp.stash = nil
  end
end

-- ---------------------------------------------------------------- send --

--- Sends what is in the input (a prompt or a /command), clears it and
--- adds it to the history. When zot refuses the prompt, the text comes back.
function M.send(inp)
  local text = M.text(inp)
  if vim.trim(text) == '' and not inp.selection then
    return
  end
  inp.history = store.add_history(inp.root, text)
  inp.idx, inp.stash = nil, nil
  local opts = { selection = inp.selection, resend = inp.editing }
  M.set_text(inp, '')
  store.update(inp.root, { draft = false })
  require('zot').send(inp.root, text, opts, function(ok)
    if ok then
      if inp.selection == opts.selection and inp.editing == opts.resend then
        inp.selection, inp.editing = nil, nil
        M.update_bar(inp)
      end
    elseif valid(inp) and vim.trim(M.text(inp)) == '' then
      M.set_text(inp, text)
      M.save_draft(inp)
    end
  end)
end

--- Attaches a selection to the next prompt of root (:ZotPrompt from
--- visual mode without words); the input's bar shows it.
function M.attach(root, selection)
  local inp = M.get(root)
  inp.selection = selection
  M.update_bar(inp)
end

--- Edit and resend: the input gets an earlier message of the user; sending
--- it replaces that message and everything after it (zot/resend).
function M.edit(root, index, text, selection)
  local inp = M.get(root)
  inp.editing = index
  inp.selection = selection
  M.set_text(inp, text)
  M.save_draft(inp)
  M.update_bar(inp)
  M.focus(root, false)
end

--- Drops what is pending besides the text: the attached selection and the
--- message being edited. Returns whether there was any.
function M.cancel(inp)
  if not (inp.selection or inp.editing) then
    return false
  end
  inp.selection, inp.editing = nil, nil
  M.update_bar(inp)
  return true
end

-- ------------------------------------------------------------- buffer --

local function set_keymaps(inp)
  local buf = inp.buf
  local k = config.get().chat.keys
  local function map(modes, lhs, rhs, desc)
    if lhs and lhs ~= '' then
      vim.keymap.set(modes, lhs, rhs, { buffer = buf, silent = true, desc = desc })
    end
  end
  local function send()
    M.send(inp)
  end
  map('n', k.send_normal, send, 'zot: send the prompt')
  map({ 'n', 'i' }, k.send, function()
    if api.nvim_get_mode().mode:sub(1, 1) == 'i' then
      vim.cmd('stopinsert')
    end
    send()
  end, 'zot: send the prompt')
  for _, lhs in ipairs({ k.history_prev, '<C-p>' }) do
    map('n', lhs, function()
      M.history_prev(inp)
    end, 'zot: the previous prompt')
  end
  for _, lhs in ipairs({ k.history_next, '<C-n>' }) do
    map('n', lhs, function()
      M.history_next(inp)
    end, 'zot: the next prompt')
  end
  map('n', '<C-c>', function()
    if not M.cancel(inp) then
      require('zot').abort({ root = inp.root })
    end
  end, 'zot: drop the attached selection / the edit; else abort the run')
  map('n', 'q', function()
    require('zot.chat').close(inp.root)
  end, 'zot: close the chat')
end

local function create(root)
  local buf = api.nvim_create_buf(false, true)
  local name = 'zot://input'
  if next(M.inputs) then
    name = name .. '/' .. root
  end
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  api.nvim_buf_set_var(buf, 'zot_root', root)
  api.nvim_buf_set_var(buf, 'zot_input', true)
  vim.bo[buf].omnifunc = 'v:lua.zot_input_omnifunc'
  local saved = store.get(root)
  local inp = {
    root = root,
    buf = buf,
    history = type(saved.history) == 'table' and saved.history or {},
  }
  M.inputs[root] = inp
  if type(saved.draft) == 'string' and saved.draft ~= '' then
    M.set_text(inp, saved.draft)
  end
  set_keymaps(inp)
  local group = api.nvim_create_augroup('zot_input_' .. buf, { clear = true })
  api.nvim_create_autocmd({ 'InsertLeave', 'TextChanged', 'BufHidden' }, {
    group = group,
    buffer = buf,
    callback = function()
      M.save_draft(inp)
    end,
  })
  api.nvim_create_autocmd('TextChangedI', {
    group = group,
    buffer = buf,
    callback = function()
      require('zot.refs').auto_complete(inp)
    end,
  })
  api.nvim_create_autocmd('VimLeavePre', {
    group = group,
    callback = function()
      M.save_draft(inp)
    end,
  })
  return inp
end

function M.get(root, create_missing)
  local inp = M.inputs[root]
  if valid(inp) then
    return inp
  end
  M.inputs[root] = nil
  if create_missing == false then
    return nil
  end
  return create(root)
end

function M.windows(inp)
  local out = {}
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == inp.buf then
      out[#out + 1] = w
    end
  end
  return out
end

--- The input window's bar: what is attached or edited, then the keys.
function M.bar_text(inp)
  local parts = {}
  if inp.editing then
    parts[#parts + 1] = 'editing your message: sending replaces it and what follows (<C-c> cancels)'
  end
  if inp.selection then
    parts[#parts + 1] = '📎 ' .. tostring(inp.selection.label) .. ' (<C-c> drops it)'
  end
  parts[#parts + 1] = M.hint()
  return table.concat(parts, ' · ')
end

function M.update_bar(inp)
  local text = ' ' .. M.bar_text(inp):gsub('%%', '%%%%')
  for _, w in ipairs(vim.fn.win_findbuf(inp.buf)) do
    pcall(function()
      vim.wo[w][require('zot.compat').has_winbar and 'winbar' or 'statusline'] = text
    end)
  end
end

local function setup_window(inp, win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  wo.winfixheight = true
  wo.foldenable = false
  M.update_bar(inp)
end

--- Shows the input of root below the chat window chat_win (in the same
--- tab), or the window it already has. Returns the input's window.
function M.open(root, chat_win)
  local inp = M.get(root)
  local wins = M.windows(inp)
  if #wins > 0 then
    return wins[1]
  end
  local o = config.get().chat
  local height = math.max(1, o.input_height)
  local win
  local cfg = api.nvim_win_get_config(chat_win)
  if cfg.relative and cfg.relative ~= '' then
    -- The chat is a float: the input is one just below it.
    local row = cfg.row
    if type(row) == 'table' then
      row = row[false] or row[1]
    end
    win = api.nvim_open_win(inp.buf, false, {
      relative = 'editor',
      width = cfg.width,
      height = height,
      row = row + cfg.height + 2,
      col = type(cfg.col) == 'table' and (cfg.col[false] or cfg.col[1]) or cfg.col,
      border = config.get().panel.border,
      style = 'minimal',
    })
  else
    local cur = api.nvim_get_current_win()
    api.nvim_set_current_win(chat_win)
    vim.cmd('belowright ' .. height .. 'split')
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, inp.buf)
    if api.nvim_win_is_valid(cur) then
      api.nvim_set_current_win(cur)
    end
  end
  setup_window(inp, win)
  local last = api.nvim_buf_line_count(inp.buf)
  pcall(api.nvim_win_set_cursor, win, { last, 0 })
  return win
end

--- Moves the cursor into the input (opening the chat); insert mode if asked.
function M.focus(root, insert)
  local chat = require('zot.chat')
  chat.open(root, false)
  local inp = M.get(root)
  local win = M.windows(inp)[1]
  if not win then
    return
  end
  api.nvim_set_current_win(win)
  if insert then
    local last = api.nvim_buf_line_count(inp.buf)
    local line = api.nvim_buf_get_lines(inp.buf, last - 1, last, false)[1] or ''
    pcall(api.nvim_win_set_cursor, win, { last, #line })
    vim.cmd('startinsert!')
  end
end

--- Puts text into the input (at its end) and focuses it: :ZotPrompt with a
--- range and no words, for instance.
function M.append(root, text)
  local inp = M.get(root)
  local cur = M.text(inp)
  if vim.trim(cur) == '' then
    cur = ''
  elseif not cur:match('%s$') then
    cur = cur .. ' '
  end
  M.set_text(inp, cur .. text)
  M.save_draft(inp)
end

--- zot/input/set: an extension sets the input (replace) or inserts text
--- at its cursor (paste; at the end when no window shows the input).
--- The draft keeps it when the chat is closed.
function M.set_from_extension(root, text, mode)
  local inp = M.get(root)
  text = text or ''
  if mode ~= 'paste' then
    M.set_text(inp, text)
  else
    local win = M.windows(inp)[1]
    local lines = vim.split(text, '\n', { plain = true })
    local row, col
    if win then
      local c = api.nvim_win_get_cursor(win)
      row, col = c[1] - 1, c[2]
      local line = api.nvim_buf_get_lines(inp.buf, row, row + 1, false)[1] or ''
      col = math.min(col + (api.nvim_get_mode().mode:sub(1, 1) == 'i' and 0 or 1), #line)
      if line == '' then
        col = 0
      end
    else
      row = api.nvim_buf_line_count(inp.buf) - 1
      col = #(api.nvim_buf_get_lines(inp.buf, row, row + 1, false)[1] or '')
    end
    api.nvim_buf_set_text(inp.buf, row, col, row, col, lines)
    if win then
      local last = row + #lines
      local endcol = (#lines == 1 and col or 0) + #lines[#lines]
      pcall(api.nvim_win_set_cursor, win, { last, endcol })
    end
  end
  M.save_draft(inp)
end

--- zot/input/get: the input's text (its draft when no buffer exists yet).
function M.text_of(root)
  local inp = M.get(root, false)
  if inp then
    return M.text(inp)
  end
  local draft = store.get(root).draft
  return type(draft) == 'string' and draft or ''
end

--- Closes the input's windows of this tab.
function M.close(root)
  local inp = M.get(root, false)
  if not inp then
    return
  end
  for _, w in ipairs(M.windows(inp)) do
    if #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, w, false)
    end
  end
end

-- omnifunc of the input buffer (v:lua needs a global function on 0.7).
function _G.zot_input_omnifunc(findstart, base)
  return require('zot.refs').omnifunc(findstart, base)
end

return M
