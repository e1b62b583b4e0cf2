-- The chat buffer: one per workspace root, filetype=markdown. The first
-- text_delta of an answer is drawn at once; the ones after it are coalesced
-- and drawn at most every chat.flush_ms with one nvim_buf_set_text at the
-- end of the last line; tool calls are compact
-- lines whose details (args, result) sit in a closed fold below them; the
-- model's thinking is a "💭 Thinking" line with its text in a closed fold
-- below (za to read; it keeps streaming while open).
local compat = require('zot.compat')
local config = require('zot.config')
local util = require('zot.util')

local api = vim.api
local uv = compat.uv

local M = {}

--- root -> chat
M.chats = {}

local ns = api.nvim_create_namespace('zot_chat')
M.ns = ns
-- The extensions' widgets (zot/ui/widget): virtual lines below the last
-- line, i.e. at the bottom of the chat, where the prompt is typed.
local widget_ns = api.nvim_create_namespace('zot_chat_widgets')
M.widget_ns = widget_ns
vim.cmd('highlight default link ZotWidget Special')

local DETAIL = '  │ '
-- Manual folds (made as details are written, remade when a window opens):
-- a foldexpr would be evaluated for every streamed line.
local FOLDTEXT = [['  │ … '.(v:foldend-v:foldstart+1).' lines of details (za)']]

-- ------------------------------------------------------------- buffer ----

local function valid(chat)
  return chat and chat.buf and api.nvim_buf_is_valid(chat.buf)
end

-- ------------------------------------------------------------- file links ----

--- The file reference under the cursor in the chat: path, path:line or
--- path:line:col (in backticks, brackets or quotes too) of a file that
--- exists, relative to the workspace root or absolute. nil otherwise.
function M.file_at_cursor(chat)
  local line = api.nvim_get_current_line()
  local col = api.nvim_win_get_cursor(0)[2] + 1
  for s, tok, e in line:gmatch('()(%S+)()') do
    if col >= s and col < e then
      -- [text](path) markdown links: the target.
      local target = tok:match('%]%(([^)]+)%)')
      tok = target or tok
      tok = tok:gsub('^[%(%[<"\'`*_]+', ''):gsub('[%)%]>"\'`*_,;.!?]+$', '')
      local path, l, c = tok:match('^(.-):(%d+):(%d+):?$')
      if not path then
        path, l = tok:match('^(.-):(%d+):?$')
      end
      if not path then
        path, l = tok:match('^(.-)#L(%d+)$')
      end
      path = path or tok:gsub(':$', '')
      if path == '' or path:match('^%a[%w+.-]*://') then
        return nil
      end
      local full = path
      if path:sub(1, 1) == '~' then
        full = vim.fn.expand(path)
      elseif not path:match('^/') then
        full = util.dir_of(chat.root) .. '/' .. path
      end
      if vim.fn.filereadable(full) == 1 then
        return { path = full, line = tonumber(l), col = tonumber(c) }
      end
      return nil
    end
  end
  return nil
end

--- Opens the file under the cursor (at its line) in the window the user
--- came from, or a new split when the chat is the only window.
function M.open_file_at_cursor(chat)
  local f = M.file_at_cursor(chat)
  if not f then
    return false
  end
  local target
  local prev = vim.fn.win_getid(vim.fn.winnr('#'))
  for _, w in ipairs({ prev, unpack(api.nvim_tabpage_list_wins(0)) }) do
    if
      w ~= 0
      and api.nvim_win_is_valid(w)
      and api.nvim_win_get_buf(w) ~= chat.buf
      and api.nvim_win_get_config(w).relative == ''
    then
      target = w
      break
    end
  end
  if target then
    api.nvim_set_current_win(target)
    vim.cmd('edit ' .. vim.fn.fnameescape(f.path))
  else
    vim.cmd('split ' .. vim.fn.fnameescape(f.path))
  end
  if f.line then
    local last = api.nvim_buf_line_count(0)
    pcall(api.nvim_win_set_cursor, 0, { math.min(f.line, last), math.max((f.col or 1) - 1, 0) })
  end
  return true
end

local function set_keymaps(chat)
  local buf = chat.buf
  local function map(lhs, rhs, desc)
    vim.keymap.set('n', lhs, rhs, { buffer = buf, silent = true, desc = desc })
  end
  local function ask()
    require('zot.input').focus(chat.root, true)
  end
  map('i', ask, 'zot: write a prompt (in the input below)')
  map('a', ask, 'zot: write a prompt (in the input below)')
  map('o', ask, 'zot: write a prompt (in the input below)')
  map('<C-c>', function()
    require('zot').abort({ root = chat.root })
  end, 'zot: abort')
  map('q', function()
    M.close(chat.root)
  end, 'zot: close the chat')
  map('<CR>', function()
    if M.open_file_at_cursor(chat) then
      return
    end
    if vim.fn.foldlevel('.') > 0 then
      vim.cmd('normal! za')
    end
  end, 'zot: open the file under the cursor, or toggle details')
  local k = config.get().chat.keys
  local function nowait(lhs, rhs, desc)
    if lhs and lhs ~= '' then
      vim.keymap.set('n', lhs, rhs, { buffer = buf, silent = true, nowait = true, desc = desc })
    end
  end
  local actions = function()
    return require('zot.actions')
  end
  nowait(k.yank_code, function()
    actions().yank_code(chat)
  end, 'zot: yank the code block')
  nowait(k.insert_code, function()
    actions().insert_code(chat)
  end, 'zot: insert the code block into the last window')
  nowait(k.apply_code, function()
    actions().apply_code(chat)
  end, 'zot: apply the code block to a file')
  nowait(k.retry, function()
    actions().retry(chat.root)
  end, 'zot: retry the last answer')
  nowait(k.edit, function()
    actions().edit(chat)
  end, 'zot: edit this message and resend it')
  nowait(k.help, function()
    util.notify(table.concat(actions().help_lines(), '\n'))
  end, 'zot: the chat keys')
  for _, lhs in ipairs({ 'gf', 'gF' }) do
    map(lhs, function()
      if not M.open_file_at_cursor(chat) then
        util.notify('zot: no existing file under the cursor', vim.log.levels.WARN)
      end
    end, 'zot: open the file under the cursor (at its line)')
  end
end

local function create(root)
  local buf = api.nvim_create_buf(false, true)
  local name = 'zot://chat'
  local n = 0
  for _ in pairs(M.chats) do
    n = n + 1
  end
  if n > 0 then
    name = name .. '/' .. root
  end
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].undolevels = -1
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  api.nvim_buf_set_var(buf, 'zot_root', root)
  local chat = {
    root = root,
    buf = buf,
    pending = {},
    pending_n = 0,
    armed = false,
    timer = uv.new_timer(),
    runs = {},
    run_header = {},
    tools = {},
    calls = {}, -- announced tool calls without a result yet, in order
    usage = nil,
    status = 'idle',
    deltas = 0,
    flushes = 0,
  }
  M.chats[root] = chat
  set_keymaps(chat)
  M.setup_autocmds()
  return chat
end

local autocmds

function M.setup_autocmds()
  if autocmds then
    return
  end
  autocmds = api.nvim_create_augroup('zot_chat', { clear = true })
  api.nvim_create_autocmd({ 'WinEnter', 'BufWinEnter' }, {
    group = autocmds,
    callback = function()
      M.remember_window()
    end,
  })
  -- Closing the chat window closes its input too.
  api.nvim_create_autocmd('WinClosed', {
    group = autocmds,
    callback = function(a)
      local w = tonumber(a.match)
      if not (w and api.nvim_win_is_valid(w)) then
        return
      end
      local buf = api.nvim_win_get_buf(w)
      for root, chat in pairs(M.chats) do
        if chat.buf == buf then
          local tab = api.nvim_win_get_tabpage(w)
          vim.schedule(function()
            if not api.nvim_tabpage_is_valid(tab) then
              return
            end
            for _, x in ipairs(api.nvim_tabpage_list_wins(tab)) do
              if api.nvim_win_get_buf(x) == chat.buf then
                return -- another window still shows the chat
              end
            end
            local inp = require('zot.input').get(root, false)
            for _, x in ipairs(api.nvim_tabpage_list_wins(tab)) do
              if inp and api.nvim_win_get_buf(x) == inp.buf and #api.nvim_list_wins() > 1 then
                pcall(api.nvim_win_close, x, false)
              end
            end
          end)
        end
      end
    end,
  })
end

function M.get(root, create_missing)
  local chat = M.chats[root]
  if valid(chat) then
    return chat
  end
  if chat and chat.timer then
    pcall(chat.timer.close, chat.timer)
  end
  M.chats[root] = nil
  if create_missing == false then
    return nil
  end
  return create(root)
end

local place_widgets

local function modify(chat, f)
  local buf = chat.buf
  vim.bo[buf].modifiable = true
  local ok, e = pcall(f, buf)
  vim.bo[buf].modifiable = false
  if not ok then
    error(e, 0)
  end
  if chat.widget_lines then
    place_widgets(chat)
  end
end

local function windows(chat)
  local out = {}
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(w) == chat.buf then
      out[#out + 1] = w
    end
  end
  return out
end

-- Windows whose cursor is on the last line follow the stream.
local function followers(chat)
  if not config.get().chat.follow then
    return {}
  end
  local last = api.nvim_buf_line_count(chat.buf)
  local out = {}
  for _, w in ipairs(windows(chat)) do
    if api.nvim_win_get_cursor(w)[1] >= last then
      out[#out + 1] = w
    end
  end
  return out
end

local function follow(chat, wins)
  if #wins == 0 then
    return
  end
  local last = api.nvim_buf_line_count(chat.buf)
  for _, w in ipairs(wins) do
    if api.nvim_win_is_valid(w) then
      pcall(api.nvim_win_set_cursor, w, { last, 0 })
    end
  end
end

--- Appends text at the end of the last line (newlines start new lines).
local function append_text(chat, text)
  if text == '' then
    return
  end
  text = text:gsub('\r', '')
  local buf = chat.buf
  local wins = followers(chat)
  local last = api.nvim_buf_line_count(buf) - 1
  local line = api.nvim_buf_get_lines(buf, last, last + 1, true)[1]
  local parts = compat.split(text, '\n')
  modify(chat, function()
    api.nvim_buf_set_text(buf, last, #line, last, #line, parts)
  end)
  follow(chat, wins)
end

local draw_thinking

--- Draws the coalesced deltas (and thinking).
function M.flush(chat)
  draw_thinking(chat)
  if chat.pending_n == 0 then
    return
  end
  local text = table.concat(chat.pending)
  chat.pending, chat.pending_n = {}, 0
  chat.flushes = chat.flushes + 1
  chat.last_flush = uv.hrtime()
  if valid(chat) then
    append_text(chat, text)
  end
end

--- Schedules a flush of what is pending: at most one per chat.flush_ms
--- (the markdown redraw a flush causes is what costs), and no later than
--- that. When the last flush is older than flush_ms the flush goes on the
--- main loop's queue (vim.schedule): the deltas already read with this one
--- are drawn with it, in one change, and no timer delays it.
local function arm(chat)
  if chat.armed then
    return
  end
  chat.armed = true
  local run = function()
    chat.armed = false
    M.flush(chat)
  end
  local wait = config.get().chat.flush_ms
  if chat.last_flush then
    wait = wait - (uv.hrtime() - chat.last_flush) / 1e6
  end
  if wait <= 0 then
    vim.schedule(run)
  else
    chat.timer:start(math.ceil(wait), 0, vim.schedule_wrap(run))
  end
end

--- Writes whole lines below what is there; text then continues on a fresh
--- line. Returns the row of the first line written.
local function block(chat, lines, gap)
  M.flush(chat)
  local buf = chat.buf
  local wins = followers(chat)
  local n = api.nvim_buf_line_count(buf)
  local last = api.nvim_buf_get_lines(buf, n - 1, n, true)[1]
  local start = last == '' and n - 1 or n
  local out = {}
  if gap and start > 0 then
    local prev = api.nvim_buf_get_lines(buf, start - 1, start, true)[1]
    if prev ~= '' then
      out[1] = ''
    end
  end
  local first = start + #out
  for _, l in ipairs(lines) do
    out[#out + 1] = (l:gsub('[\r\n]', ' '))
  end
  out[#out + 1] = ''
  modify(chat, function()
    api.nvim_buf_set_lines(buf, start, n, false, out)
  end)
  follow(chat, wins)
  return first
end

--- A note in the chat (command output, errors, …).
function M.note(root, text, kind)
  local chat = M.get(root)
  local lines = {}
  for _, l in ipairs(compat.split(tostring(text or ''), '\n')) do
    if kind == 'error' then
      lines[#lines + 1] = (#lines == 0 and '**error:** ' or '') .. l
    else
      lines[#lines + 1] = '> ' .. l
    end
  end
  block(chat, lines, true)
end

-- --------------------------------------------------------------- header --

local know_windows, update_bar

local function bar_text(chat)
  local st = require('zot.client').by_root[chat.root]
  local model = chat.model or (st and st.info and st.info.model) or ''
  local parts = { 'zot' }
  if model ~= '' then
    parts[#parts + 1] = model
  end
  parts[#parts + 1] = chat.status
  -- The extensions' status items (zot/ui/status), as in statusline().
  for _, text in ipairs(require('zot.extui').status_texts(st)) do
    parts[#parts + 1] = (tostring(text):gsub('[\r\n]', ' '))
  end
  local queued = 0
  for _, r in pairs(chat.runs) do
    if r.queued and not r.done then
      queued = queued + 1
    end
  end
  if queued > 0 then
    parts[#parts + 1] = string.format('%d queued', queued)
  end
  local u = chat.usage
  if u then
    parts[#parts + 1] = string.format('↑%s ↓%s', util.human(u.input), util.human(u.output))
    if (tonumber(u.cost_usd) or 0) > 0 then
      parts[#parts + 1] = string.format('$%.4f', tonumber(u.cost_usd))
    end
  end
  local window = chat.windows and chat.windows[model]
  if window and window > 0 and (chat.ctx_used or 0) > 0 then
    local pct = chat.ctx_used / window * 100
    parts[#parts + 1] = string.format(
      'ctx %s of %s',
      pct < 1 and '<1%' or string.format('%d%%', math.min(100, math.floor(pct + 0.5))),
      util.human(window)
    )
  end
  return table.concat(parts, ' · ')
end
M.bar_text = bar_text

--- Learns the models' context windows (zot/models), once per chat, for
--- the bar's fill.
know_windows = function(chat, state)
  if chat.windows or chat.asking_windows or not state then
    return
  end
  chat.asking_windows = true
  require('zot.client').request(state, require('zot.protocol').request.models, nil, function(err, res)
    chat.asking_windows = false
    if err or not res then
      return
    end
    chat.windows = {}
    for _, m in ipairs(res.models or {}) do
      chat.windows[m.id] = tonumber(m.context_window) or 0
    end
    update_bar(chat)
  end)
end

update_bar = function(chat)
  local text = bar_text(chat)
  if text == chat.bar then
    return
  end
  chat.bar = text
  local esc = ' ' .. text:gsub('%%', '%%%%')
  for _, w in ipairs(windows(chat)) do
    pcall(function()
      vim.wo[w][compat.has_winbar and 'winbar' or 'statusline'] = esc
    end)
  end
end
M.update_bar = update_bar

-- (Re)places the widget lines below the buffer's last line (text is
-- appended there, so the mark moves with every change).
place_widgets = function(chat)
  local buf = chat.buf
  local lines = chat.widget_lines or {}
  if #lines == 0 then
    if chat.widget_mark then
      pcall(api.nvim_buf_del_extmark, buf, widget_ns, chat.widget_mark)
      chat.widget_mark = nil
    end
    chat.widget_lines = nil
    return
  end
  local virt = {}
  for _, l in ipairs(lines) do
    virt[#virt + 1] = { { (tostring(l):gsub('[\r\n\t]', ' ')), 'ZotWidget' } }
  end
  local last = api.nvim_buf_line_count(buf) - 1
  local ok, id = pcall(api.nvim_buf_set_extmark, buf, widget_ns, last, 0, {
    id = chat.widget_mark,
    virt_lines = virt,
  })
  if ok then
    chat.widget_mark = id
  end
end

--- Shows lines (the extensions' widgets, in key order) at the bottom of
--- the chat; {} removes them.
function M.set_widgets(root, lines)
  local chat = M.get(root, false)
  if not chat then
    if #lines == 0 then
      return
    end
    chat = M.get(root)
  end
  chat.widget_lines = lines
  place_widgets(chat)
end

--- The widget lines shown in the chat now (virtual lines), or {}.
function M.widgets_shown(root)
  local chat = M.get(root, false)
  if not chat or not chat.widget_mark then
    return {}
  end
  local mark = api.nvim_buf_get_extmark_by_id(chat.buf, widget_ns, chat.widget_mark, { details = true })
  local out = {}
  for _, chunks in ipairs((mark[3] or {}).virt_lines or {}) do
    local t = {}
    for _, c in ipairs(chunks) do
      t[#t + 1] = c[1]
    end
    out[#out + 1] = table.concat(t)
  end
  return out, mark[1]
end

local function set_status(chat, s)
  if chat.status ~= s then
    chat.status = s
    update_bar(chat)
  end
end

function M.set_model(root, model)
  local chat = M.get(root)
  chat.model = model
  update_bar(chat)
end

-- --------------------------------------------------------------- window --

local function is_detail(l)
  return l:sub(1, #DETAIL) == DETAIL
end

--- Folds rows s..e (0-based, inclusive) in every window showing the chat.
local function fold(chat, s, e, wins)
  for _, w in ipairs(wins or windows(chat)) do
    pcall(api.nvim_win_call, w, function()
      if vim.wo.foldmethod == 'manual' then
        vim.cmd(string.format('silent %d,%dfold', s + 1, e + 1))
      end
    end)
  end
end

--- Recreates the detail folds of a window (manual folds are per window).
local function refold(chat, win)
  pcall(api.nvim_win_call, win, function()
    vim.cmd('silent! normal! zE')
  end)
  local lines = api.nvim_buf_get_lines(chat.buf, 0, -1, false)
  local start
  for i = 1, #lines + 1 do
    local d = lines[i] ~= nil and is_detail(lines[i])
    if d and not start then
      start = i - 1
    elseif not d and start then
      fold(chat, start, i - 2, { win })
      start = nil
    end
  end
end

local function setup_window(chat, win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  wo.foldmethod = 'manual'
  wo.foldtext = FOLDTEXT
  wo.foldlevel = 0
  wo.foldminlines = 0 -- a one-line thinking or result folds too
  wo.foldenable = true
  refold(chat, win)
  chat.bar = nil
  update_bar(chat)
end

local function size(total, want, min)
  if want <= 1 then
    return math.max(min, math.floor(total * want))
  end
  return math.floor(want)
end

--- Scrolls the chat's windows to its end.
function M.scroll_to_end(root)
  local chat = M.get(root, false)
  if not chat then
    return
  end
  local last = api.nvim_buf_line_count(chat.buf)
  for _, w in ipairs(windows(chat)) do
    pcall(api.nvim_win_set_cursor, w, { last, 0 })
  end
end

--- The chat's window in the current tab, if it has one.
local function tab_window(chat)
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == chat.buf then
      return w
    end
  end
  return nil
end

--- Shows the chat of root (in the current tab) with its input below;
--- focus moves to the input if asked ("chat": to the chat itself).
function M.open(root, focus)
  local chat = M.get(root)
  M.remember_window()
  local cur = api.nvim_get_current_win()
  local win = tab_window(chat)
  local o = config.get().chat
  if not win then
    if o.layout == 'float' then
      -- A float over the editor that the cursor is not in cannot be used
      -- (or closed with q): it always takes focus.
      focus = focus or true
      local w = math.floor(vim.o.columns * 0.8)
      local total = math.floor((vim.o.lines - 2) * 0.8)
      local ih = math.max(1, o.input_height)
      local h = math.max(3, total - ih - 2)
      win = api.nvim_open_win(chat.buf, true, {
        relative = 'editor',
        width = w,
        height = h,
        row = math.max(0, math.floor((vim.o.lines - total) / 2) - 1),
        col = math.floor((vim.o.columns - w) / 2),
        border = config.get().panel.border,
        style = 'minimal',
      })
    else
      if o.layout == 'vertical' then
        vim.cmd('botright vsplit')
        win = api.nvim_get_current_win()
        api.nvim_win_set_width(win, size(vim.o.columns, o.size, 20))
      else
        vim.cmd('botright split')
        win = api.nvim_get_current_win()
        api.nvim_win_set_height(win, size(vim.o.lines, o.size, 5))
      end
      api.nvim_win_set_buf(win, chat.buf)
    end
    setup_window(chat, win)
    pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(chat.buf), 0 })
  end
  local iwin = require('zot.input').open(root, win)
  if focus == 'chat' then
    api.nvim_set_current_win(win)
  elseif focus then
    api.nvim_set_current_win(iwin)
  elseif api.nvim_win_is_valid(cur) then
    api.nvim_set_current_win(cur)
  end
  return win
end

function M.close(root)
  local chat = M.get(root, false)
  if not chat then
    return
  end
  require('zot.input').close(root)
  for _, w in ipairs(windows(chat)) do
    if #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, w, false)
    end
  end
end

function M.is_open(root)
  local chat = M.get(root, false)
  return chat ~= nil and tab_window(chat) ~= nil
end

function M.toggle(root)
  if M.is_open(root) then
    M.close(root)
  else
    M.open(root, true)
  end
end

-- ------------------------------------------------- the user's windows --

local last_window

local function is_file_window(w)
  if not (w and api.nvim_win_is_valid(w)) or api.nvim_win_get_config(w).relative ~= '' then
    return false
  end
  local b = api.nvim_win_get_buf(w)
  return vim.bo[b].buftype == '' and not api.nvim_buf_get_name(b):match('^%a[%w+.-]*://')
end

--- Notes the current window if it shows a file (the window #buffer,
--- #selection and "insert the code block" mean).
function M.remember_window()
  local w = api.nvim_get_current_win()
  if is_file_window(w) then
    last_window = w
  end
end

--- The last window that showed a file (in the current tab if possible).
function M.last_window()
  if is_file_window(last_window) and api.nvim_win_get_tabpage(last_window) == api.nvim_get_current_tabpage() then
    return last_window
  end
  local prev = vim.fn.win_getid(vim.fn.winnr('#'))
  if is_file_window(prev) then
    return prev
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if is_file_window(w) then
      return w
    end
  end
  if is_file_window(last_window) then
    return last_window
  end
  return nil
end

--- Empties the chat (:ZotNew).
function M.clear(root)
  local chat = M.get(root)
  chat.pending, chat.pending_n = {}, 0
  chat.tools, chat.run_header, chat.think, chat.user_msgs = {}, {}, nil, {}
  api.nvim_buf_clear_namespace(chat.buf, ns, 0, -1)
  modify(chat, function(buf)
    api.nvim_buf_set_lines(buf, 0, -1, false, {})
  end)
  chat.usage = nil
  update_bar(chat)
end

-- ---------------------------------------------------------------- tools --

local function arg_summary(name, args)
  if type(args) ~= 'table' then
    return name
  end
  local main = args.path or args.command or args.pattern or args.file or args.query
  if main == nil then
    for _, v in pairs(args) do
      if type(v) == 'string' then
        main = v
        break
      end
    end
  end
  if main == nil then
    return name
  end
  return name .. ' ' .. util.truncate(util.first_line(main), 60)
end

local function detail_lines(text, max, out)
  out = out or {}
  local lines = compat.split(text, '\n')
  if #lines > 1 and lines[#lines] == '' then
    lines[#lines] = nil
  end
  for i, l in ipairs(lines) do
    if i > max then
      out[#out + 1] = DETAIL .. string.format('… %d more lines', #lines - max)
      break
    end
    out[#out + 1] = DETAIL .. l:gsub('\r', '')
  end
  return out
end

local function args_details(args, max)
  local out = {}
  if type(args) ~= 'table' then
    return out
  end
  local keys = vim.tbl_keys(args)
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = args[k]
    if type(v) == 'string' and v:find('\n') then
      out[#out + 1] = DETAIL .. k .. ':'
      detail_lines(v, max, out)
    else
      local s = type(v) == 'string' and v or vim.json.encode(v)
      out[#out + 1] = DETAIL .. k .. ': ' .. s:gsub('[\r\n]', ' ')
    end
  end
  return out
end

local function tool_row(chat, id)
  local mark = chat.tools[id]
  if not mark then
    return nil
  end
  local pos = api.nvim_buf_get_extmark_by_id(chat.buf, ns, mark.extmark, {})
  return pos and pos[1]
end

local function on_tool_call(chat, ev)
  local summary = arg_summary(ev.name or 'tool', util.val(ev.args))
  local lines = { '⚙ ' .. summary .. ' …' }
  vim.list_extend(lines, args_details(util.val(ev.args), config.get().chat.max_detail_lines))
  local row = block(chat, lines, false)
  local id = api.nvim_buf_set_extmark(chat.buf, ns, row, 0, {})
  chat.tools[ev.id or ''] = { extmark = id, summary = summary, name = ev.name }
  -- An answer's tool_calls all come before its calls run (zot's order):
  -- the status names the first unfinished one, the one running.
  chat.calls = chat.calls or {}
  table.insert(chat.calls, { id = ev.id or '', name = ev.name })
  if #chat.calls == 1 then
    set_status(chat, 'running ' .. tostring(ev.name or 'tool'))
  end
end

-- The status after a call's result: the next announced call, else thinking.
local function call_finished(chat, id)
  local calls = chat.calls or {}
  for i, c in ipairs(calls) do
    if c.id == id then
      table.remove(calls, i)
      break
    end
  end
  if calls[1] then
    set_status(chat, 'running ' .. tostring(calls[1].name or 'tool'))
  else
    set_status(chat, 'thinking')
  end
end

local function on_tool_progress(chat, ev)
  local mark = chat.tools[ev.id or '']
  local row = tool_row(chat, ev.id or '')
  if not (mark and row) then
    return
  end
  pcall(api.nvim_buf_set_extmark, chat.buf, ns, row, 0, {
    id = mark.extmark,
    virt_text = { { ' ' .. util.truncate(util.first_line(ev.text), 60), 'Comment' } },
  })
end

--- What a user's command's card shows when it ends, and whether it
--- failed (blocked, stopped or a non-zero exit).
function M.user_bash_text(ev)
  if util.val(ev.blocked) then
    local by = util.val(ev.extension) and (' by ' .. ev.extension) or ''
    return 'blocked' .. by .. ': ' .. tostring(util.val(ev.reason) or ''), true
  end
  local out = util.val(ev.output)
  local parts = { (out and out ~= '') and out or '(no output)' }
  if util.val(ev.note) then
    table.insert(parts, ev.note)
  end
  local code = tonumber(util.val(ev.exit_code)) or 0
  local cancelled = util.val(ev.cancelled) == true
  if cancelled then
    table.insert(parts, 'stopped')
  elseif code ~= 0 then
    table.insert(parts, 'exit code ' .. code)
  end
  if util.val(ev.extension) then
    table.insert(parts, '(run by ' .. ev.extension .. ')')
  end
  return table.concat(parts, '\n\n'), cancelled or code ~= 0
end

local function on_tool_result(chat, ev)
  M.flush(chat)
  local text = util.content_text(ev.content)
  local ok = not util.val(ev.is_error)
  local mark = chat.tools[ev.id or '']
  local row = tool_row(chat, ev.id or '')
  local icon = ok and '✓' or '✗'
  if not (mark and row) then
    block(chat, { icon .. ' tool — ' .. util.truncate(util.first_line(text), 80) }, false)
    call_finished(chat, ev.id or '')
    return
  end
  local buf = chat.buf
  local head = icon .. ' ' .. mark.summary .. ' — ' .. util.truncate(util.first_line(text), 80)
  local n = api.nvim_buf_line_count(buf)
  local after = row + 1
  while after < n do
    local l = api.nvim_buf_get_lines(buf, after, after + 1, true)[1]
    if not is_detail(l) then
      break
    end
    after = after + 1
  end
  local details = { DETAIL .. (ok and '─ result ─' or '─ error ─') }
  detail_lines(text, config.get().chat.max_detail_lines, details)
  local wins = followers(chat)
  modify(chat, function()
    api.nvim_buf_set_lines(buf, row, row + 1, false, { head })
    api.nvim_buf_set_lines(buf, after, after, false, details)
  end)
  pcall(api.nvim_buf_set_extmark, buf, ns, row, 0, { id = mark.extmark })
  fold(chat, row + 1, after + #details - 1)
  follow(chat, wins)
  call_finished(chat, ev.id or '')
end

-- ------------------------------------------------------------- thinking --

local THINKING = '💭 Thinking'
-- Thinking can be long; its fold keeps this many lines.
local MAX_THINKING_LINES = 2000

--- Redraws the streaming thinking below its header line, keeping the fold
--- closed unless the user opened it.
draw_thinking = function(chat)
  local th = chat.think
  if not (th and th.dirty and valid(chat)) then
    return
  end
  th.dirty = false
  local buf = chat.buf
  local pos = api.nvim_buf_get_extmark_by_id(buf, ns, th.extmark, {})
  local row = pos and pos[1]
  if not row then
    return
  end
  local n = api.nvim_buf_line_count(buf)
  local after = row + 1
  while after < n and is_detail(api.nvim_buf_get_lines(buf, after, after + 1, true)[1]) do
    after = after + 1
  end
  local details = detail_lines(th.text, MAX_THINKING_LINES)
  local wins = windows(chat)
  local open = {}
  for _, w in ipairs(wins) do
    pcall(api.nvim_win_call, w, function()
      open[w] = after > row + 1 and vim.fn.foldlevel(row + 2) > 0 and vim.fn.foldclosed(row + 2) == -1
    end)
  end
  local following = followers(chat)
  modify(chat, function()
    api.nvim_buf_set_lines(buf, row + 1, after, false, details)
  end)
  if #details > 0 then
    for _, w in ipairs(wins) do
      pcall(api.nvim_win_call, w, function()
        if vim.wo.foldmethod == 'manual' then
          vim.cmd(string.format('silent! %d,%dfolddelete', row + 2, row + 1 + #details))
          vim.cmd(string.format('silent %d,%dfold', row + 2, row + 1 + #details))
          if open[w] then
            vim.cmd(string.format('silent %dfoldopen', row + 2))
          end
        end
      end)
    end
  end
  follow(chat, following)
end

local function on_thinking(chat, text)
  if not text or text == '' then
    return
  end
  local th = chat.think
  if not th then
    M.flush(chat)
    local row = block(chat, { THINKING .. '…' }, false)
    th = { extmark = api.nvim_buf_set_extmark(chat.buf, ns, row, 0, {}), text = '' }
    chat.think = th
    set_status(chat, 'thinking')
  end
  th.text = th.text .. text
  th.dirty = true
  arm(chat)
end

--- The thinking is over (the answer or a tool call starts): draw the rest
--- and drop the ellipsis.
local function end_thinking(chat)
  local th = chat.think
  if not th then
    return
  end
  draw_thinking(chat)
  chat.think = nil
  local pos = valid(chat) and api.nvim_buf_get_extmark_by_id(chat.buf, ns, th.extmark, {})
  if pos and pos[1] then
    modify(chat, function()
      api.nvim_buf_set_lines(chat.buf, pos[1], pos[1] + 1, false, { THINKING })
    end)
  end
  pcall(api.nvim_buf_del_extmark, chat.buf, ns, th.extmark)
end

-- ------------------------------------------------------ user messages --

M.CHIP = '📎 '

local function unescape(v)
  return (v:gsub('&lt;', '<'):gsub('&gt;', '>'):gsub('&#34;', '"'):gsub('&#39;', "'"):gsub('&amp;', '&'))
end

--- The attributes of a context block's header (`<context kind=".." …>`).
function M.context_header(text)
  local head = text:match('^<context ([^\n]*)>\n') or text:match('^<context ([^\n]*)>$')
  if not head or not vim.endswith(text, '</context>') then
    return nil
  end
  local attrs = {}
  for k, v in head:gmatch('([%w_]+)="([^"]*)"') do
    attrs[k] = unescape(v)
  end
  return attrs
end

--- A user message's content: the user's own text and the attachments
--- (context blocks, shown as chips), each chip { kind, label, path, uri,
--- server, lines }.
function M.split_user_content(content)
  content = util.val(content)
  if type(content) == 'string' then
    return content, {}
  end
  local texts, chips = {}, {}
  for _, c in ipairs(content or {}) do
    if type(c) == 'table' and c.type == 'text' and type(c.text) == 'string' then
      local attrs = M.context_header(c.text)
      if attrs then
        attrs.label = attrs.label or attrs.path or attrs.kind or 'context'
        chips[#chips + 1] = attrs
      else
        texts[#texts + 1] = c.text
      end
    elseif type(c) == 'table' and c.type == 'image' then
      texts[#texts + 1] = string.format('[image %s]', tostring(c.mime_type or c.mimeType or ''))
    end
  end
  return table.concat(texts, '\n'), chips
end

local function msg_row(chat, m)
  local pos = api.nvim_buf_get_extmark_by_id(chat.buf, ns, m.extmark, {})
  return pos and pos[1]
end

--- The user message whose block holds row (0-based): the last one that
--- starts at or above it.
function M.user_message_at(chat, row)
  local found
  for _, m in ipairs(chat.user_msgs or {}) do
    local r = msg_row(chat, m)
    if r and r <= row then
      found = m
    end
  end
  return found
end

--- Removes a user message and everything after it from the view (zot/retry
--- and zot/resend cut the conversation there): the one with messageIndex
--- index, or the last one when index is nil (a retry, which zot always
--- makes of the last prompt, numbered or not since a compaction). Returns
--- what was cut, for M.untruncate when zot refuses; nil if nothing was.
function M.truncate_at(root, index)
  local chat = M.get(root, false)
  if not chat then
    return nil
  end
  M.flush(chat)
  local msgs = chat.user_msgs or {}
  local from
  for i, m in ipairs(msgs) do
    if index == nil and i == #msgs or index ~= nil and m.index ~= nil and m.index >= index then
      from = i
      break
    end
  end
  local cut = from and msg_row(chat, msgs[from])
  if not cut then
    return nil
  end
  -- The blank line that separated it from what came before goes too.
  if cut > 0 and api.nvim_buf_get_lines(chat.buf, cut - 1, cut, false)[1] == '' then
    cut = cut - 1
  end
  local saved = { row = cut, lines = api.nvim_buf_get_lines(chat.buf, cut, -1, false), msgs = {}, tools = {} }
  local keep = {}
  for i, m in ipairs(msgs) do
    if i < from then
      keep[#keep + 1] = m
    else
      saved.msgs[#saved.msgs + 1] = { msg = m, offset = (msg_row(chat, m) or cut) - cut }
      pcall(api.nvim_buf_del_extmark, chat.buf, ns, m.extmark)
    end
  end
  for id, t in pairs(chat.tools) do
    local r = tool_row(chat, id)
    if r and r >= cut then
      saved.tools[id] = { tool = t, offset = r - cut }
    end
  end
  chat.user_msgs = keep
  modify(chat, function(buf)
    api.nvim_buf_set_lines(buf, cut, -1, false, { '' })
  end)
  chat.tools = {}
  return saved
end

--- Puts back what M.truncate_at cut (zot refused the retry or resend):
--- the lines, the user messages (still editable) and the tool cards, with
--- their folds.
function M.untruncate(root, saved)
  local chat = M.get(root, false)
  if not (chat and saved and valid(chat)) then
    return
  end
  local buf = chat.buf
  local row = math.min(saved.row, api.nvim_buf_line_count(buf) - 1)
  modify(chat, function()
    -- The blank line truncate_at left stands for what it cut; anything
    -- written since (a note) stays after it.
    local blank = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] == ''
    api.nvim_buf_set_lines(buf, row, blank and row + 1 or row, false, saved.lines)
  end)
  chat.user_msgs = chat.user_msgs or {}
  for _, s in ipairs(saved.msgs) do
    s.msg.extmark = api.nvim_buf_set_extmark(buf, ns, row + s.offset, 0, {})
    table.insert(chat.user_msgs, s.msg)
  end
  for id, s in pairs(saved.tools) do
    s.tool.extmark = api.nvim_buf_set_extmark(buf, ns, row + s.offset, 0, {})
    chat.tools[id] = s.tool
  end
  for _, w in ipairs(windows(chat)) do
    refold(chat, w)
  end
end

-- --------------------------------------------------------- code blocks --

--- The fenced code blocks of the chat: { s, e (0-based rows of the
--- fences), info (after the opening fence), lines }.
function M.code_blocks(chat)
  local lines = api.nvim_buf_get_lines(chat.buf, 0, -1, false)
  local out, open = {}, nil
  for i, l in ipairs(lines) do
    if open then
      local fence = l:match('^%s*([`~]+)%s*$')
      if fence and fence:sub(1, 1) == open.char and #fence >= #open.fence then
        open.e = i - 1
        open.lines = vim.list_slice(lines, open.s + 2, i - 1)
        if open.indent > 0 then
          for j, x in ipairs(open.lines) do
            open.lines[j] = x:sub(1, open.indent):match('^%s*$') and x:sub(open.indent + 1) or x
          end
        end
        out[#out + 1] = open
        open = nil
      end
    else
      local indent, fence, info = l:match('^(%s*)(```+)%s*([^`]*)$')
      if not fence then
        indent, fence, info = l:match('^(%s*)(~~~+)%s*(.*)$')
      end
      if fence and not is_detail(l) then
        open = { s = i - 1, fence = fence, char = fence:sub(1, 1), info = vim.trim(info), indent = #indent }
      end
    end
  end
  return out
end

--- The code block under the cursor row (0-based), else the last one
--- above it.
function M.code_block_at(chat, row)
  local best
  for _, b in ipairs(M.code_blocks(chat)) do
    if row >= b.s and row <= b.e then
      return b
    end
    if b.e < row then
      best = b
    end
  end
  return best
end

--- The file a code block is meant for: a path in its info string
--- ("```go main.go", "```go:main.go", "```main.go"), else the nearest
--- file the text above it names (`main.go`, main.go:12), else nil.
function M.code_block_file(chat, b)
  local function existing(tok)
    if not tok or tok == '' then
      return nil
    end
    tok = tok:gsub('^[%(%[<"\'`*_]+', ''):gsub('[%)%]>"\'`*_,;.!?:]+$', '')
    tok = tok:gsub(':%d+$', ''):gsub(':%d+$', '')
    if tok == '' or tok:match('^%a[%w+.-]*://') then
      return nil
    end
    local full = tok:match('^/') and tok or (util.dir_of(chat.root) .. '/' .. tok)
    if vim.fn.filereadable(full) == 1 then
      return full
    end
    return nil
  end
  local info = b.info or ''
  local path = info:match('^%S+%s+(%S+)') or info:match('^[%w_+-]+:(%S+)') or info:match('^path=(%S+)')
  path = path and path:gsub('^path=', '')
  if not path and info:find('[./]') then
    path = info:match('^(%S+)$') -- "```main.go"
  end
  if path and path:find('[./]') then
    -- It may not exist yet: applying creates it.
    return existing(path) or (path:match('^/') and path or (util.dir_of(chat.root) .. '/' .. path))
  end
  local lines = api.nvim_buf_get_lines(chat.buf, math.max(0, b.s - 6), b.s, false)
  for i = #lines, 1, -1 do
    if lines[i]:match('^## ') then
      break
    end
    local last
    for tok in lines[i]:gmatch('%S+') do
      last = existing(tok) or last
    end
    if last then
      return last
    end
  end
  return nil
end

-- --------------------------------------------------------------- events --

local function run_of(chat, id)
  id = id or ''
  local r = chat.runs[id]
  if not r then
    r = { id = id, done = false, deltas = 0 }
    chat.runs[id] = r
  end
  chat.last_run = r
  return r
end

--- The lines of the error that ended a run: the error, and how to retry it
--- (a provider unreachable, a rate limit: the same prompt again).
local function run_error_lines(msg)
  local lines = { '**error:** ' .. msg }
  local key = config.get().chat.keys.retry
  if key and key ~= '' then
    lines[#lines + 1] = string.format('_(%s in the chat: retry)_', key)
  end
  return lines
end

--- A zot/event notification.
function M.on_event(state, ev)
  local chat = M.get(state.root)
  local t = ev.type
  if t == 'text_delta' then
    local d = ev.delta
    if chat.think then
      end_thinking(chat)
    end
    if d and d ~= '' then
      chat.pending_n = chat.pending_n + 1
      chat.pending[chat.pending_n] = d
      chat.deltas = chat.deltas + 1
      if not chat.writing then
        -- The answer's first text: drawn now, not after a batch (what the
        -- user waits for after Enter); what follows is batched (arm).
        chat.writing = true
        M.flush(chat)
        set_status(chat, 'writing')
      else
        arm(chat)
      end
    end
    return
  end
  if t == 'thinking_delta' then
    on_thinking(chat, ev.text)
    return
  end
  if chat.think then
    end_thinking(chat)
  end
  local run = run_of(chat, ev.runId)
  if t == 'turn_start' then
    run.started = true
    if run.queued then
      run.queued = false -- its turn came
      update_bar(chat)
    end
    set_status(chat, 'thinking')
  elseif t == 'user_message' then
    local text, chips = M.split_user_content(ev.content)
    local lines = { '## You' }
    if text ~= '' or #chips == 0 then
      for _, l in ipairs(compat.split(text, '\n')) do
        lines[#lines + 1] = l
      end
    end
    for _, c in ipairs(chips) do
      lines[#lines + 1] = M.CHIP .. c.label
    end
    local row = block(chat, lines, true)
    chat.user_msgs = chat.user_msgs or {}
    table.insert(chat.user_msgs, {
      extmark = api.nvim_buf_set_extmark(chat.buf, ns, row, 0, {}),
      index = tonumber(util.val(ev.messageIndex)),
      text = text,
      chips = chips,
      run = run.id,
    })
  elseif t == 'assistant_start' then
    chat.writing = false
    run.saw_delta = false
    if not chat.run_header[run.id] then
      chat.run_header[run.id] = true
      block(chat, { '## zot' }, true)
    else
      M.flush(chat)
    end
    set_status(chat, 'thinking')
  elseif t == 'assistant_message' then
    M.flush(chat)
  elseif t == 'tool_call' then
    on_tool_call(chat, ev)
  elseif t == 'tool_progress' then
    on_tool_progress(chat, ev)
  elseif t == 'tool_result' then
    on_tool_result(chat, ev)
  elseif t == 'usage' then
    chat.usage = util.val(ev.cumulative) or ev
    -- What the last model call read: how full the context window is.
    chat.ctx_used = (tonumber(ev.input) or 0)
      + (tonumber(util.val(ev.cache_read)) or 0)
      + (tonumber(util.val(ev.cache_write)) or 0)
    know_windows(chat, state)
    update_bar(chat)
  elseif t == 'turn_end' then
    run.stop = ev.stop
    if ev.stop == 'aborted' then
      block(chat, { '_(aborted)_' }, false)
    elseif ev.stop == 'error' then
      -- The same failure may come as an "error" event too: shown once.
      if not run.error_shown then
        run.error_shown = true
        block(chat, run_error_lines(tostring(util.val(ev.error) or 'the model call failed')), false)
      end
    elseif ev.stop == 'length' then
      block(chat, { '_(stopped: the output limit was reached)_' }, false)
    else
      M.flush(chat)
    end
  elseif t == 'error' then
    run.error = ev.message
    if not run.error_shown then
      run.error_shown = true
      block(chat, run_error_lines(tostring(ev.message or '')), false)
    end
  elseif t == 'user_bash_start' then
    -- The user's own command (`!cmd`): a tool card named as typed.
    local name = util.val(ev.exclude_from_context) and '!!' or '!'
    on_tool_call(chat, { id = 'ub-' .. tostring(ev.runId), name = name, args = { command = ev.command } })
  elseif t == 'user_bash_output' then
    on_tool_progress(chat, { id = 'ub-' .. tostring(ev.runId), text = ev.text })
  elseif t == 'user_bash' then
    local text, failed = M.user_bash_text(ev)
    on_tool_result(
      chat,
      { id = 'ub-' .. tostring(ev.runId), is_error = failed, content = { { type = 'text', text = text } } }
    )
  elseif t == 'compact_done' then
    -- The transcript was renumbered: the messages shown so far cannot be
    -- named to zot/resend any more (an old index may name another prompt).
    for _, m in ipairs(chat.user_msgs or {}) do
      m.index = nil
      m.compacted = true
    end
    block(chat, { '_(conversation compacted)_' }, true)
  elseif t == 'done' then
    M.flush(chat)
    run.done = true
    chat.calls = {}
    if state.replay then
      return
    end
    require('zot.client').track_session(state) -- /new, /resume change it
    local busy = false
    for _, r in pairs(chat.runs) do
      if not r.done then
        busy = true
      end
    end
    chat.writing = false
    if not busy then
      set_status(chat, 'idle')
    end
    require('zot.review').run_done(state, ev.runId)
    pcall(api.nvim_exec_autocmds, 'User', { pattern = 'ZotRunDone', modeline = false })
  end
end

--- A run was accepted by zot/prompt (or a prompt command).
function M.on_started(state, res)
  local chat = M.get(state.root)
  if res and res.runId then
    local run = run_of(chat, res.runId)
    -- Queued: said in the bar ("1 queued"), never written into the
    -- answer that is streaming; the run's own "## You" comes when it starts.
    run.queued = res.queued and not run.started and not run.done
    update_bar(chat)
  end
  set_status(chat, 'thinking')
end

function M.on_progress(state, value)
  local chat = M.get(state.root, false)
  if not chat then
    return
  end
  chat.progress = value
end

function M.on_edit(_, _) end

function M.on_exit(state, code, signal)
  local chat = M.get(state.root, false)
  if not chat then
    return
  end
  M.flush(chat)
  for _, r in pairs(chat.runs) do
    r.done = true
  end
  -- A restarted zot numbers its runs from 1 again: forget these ids, so
  -- new runs get their own "## zot" header.
  chat.runs, chat.run_header = {}, {}
  if not state.stopping then
    local resume = require('zot.client').resume_after_crash[state.root]
    block(chat, {
      string.format('_(zot exited: code %s, signal %s)_', tostring(code), tostring(signal))
        .. (resume and ' _It restarts with your next prompt and resumes this session._' or ''),
    }, true)
  end
  set_status(chat, 'stopped')
end

--- The zot/event stream a conversation (zot/messages) would have sent:
--- a resumed session is drawn by the same code as a live one (headers,
--- tool lines with ✓/✗ and their results, thinking folds).
function M.events_of_messages(messages)
  local evs = {}
  local run = 0
  local open = false
  local function add(ev)
    ev.runId = 'history-' .. run
    evs[#evs + 1] = ev
  end
  for i, m in ipairs(messages or {}) do
    local content = util.val(m.content) or {}
    if m.role == 'user' then
      local texts, results = {}, {}
      for _, c in ipairs(content) do
        if type(c) == 'table' and c.type == 'text' and type(c.text) == 'string' then
          texts[#texts + 1] = c
        elseif type(c) == 'table' and c.type == 'tool_result' then
          results[#results + 1] = c
        end
      end
      for _, c in ipairs(results) do
        add({
          type = 'tool_result',
          id = c.call_id,
          content = util.val(c.content) or {},
          is_error = util.val(c.is_error),
        })
      end
      if #texts > 0 then
        if open then
          add({ type = 'done' })
        end
        run = run + 1
        open = true
        add({ type = 'user_message', content = texts, messageIndex = i - 1 })
      end
    elseif m.role == 'assistant' then
      if not open then
        run = run + 1
        open = true
      end
      add({ type = 'assistant_start' })
      local text = {}
      for _, c in ipairs(content) do
        if type(c) == 'table' and c.type == 'thinking' then
          add({
            type = 'thinking_delta',
            text = util.val(c.redacted) and '(redacted by the provider)' or (c.text or ''),
          })
        elseif type(c) == 'table' and c.type == 'text' and type(c.text) == 'string' then
          text[#text + 1] = c.text
        end
      end
      if #text > 0 then
        add({ type = 'text_delta', delta = table.concat(text, '\n') })
      end
      add({ type = 'assistant_message', content = content })
      for _, c in ipairs(content) do
        if type(c) == 'table' and c.type == 'tool_call' then
          add({ type = 'tool_call', id = c.id, name = c.name, args = util.val(c.args) })
        end
      end
    end
  end
  if open then
    add({ type = 'done' })
  end
  return evs
end

--- Renders a conversation from zot/messages (after a resume), through
--- on_event, as it would have streamed.
function M.render_messages(root, messages)
  M.clear(root)
  local chat = M.get(root)
  local replay = { root = root, replay = true }
  local last = chat.last_run
  for _, ev in ipairs(M.events_of_messages(messages)) do
    M.on_event(replay, ev)
  end
  M.flush(chat)
  chat.runs, chat.run_header = {}, {} -- live runs number from 1 on their own
  chat.last_run = last
  chat.writing = false
  set_status(chat, 'idle')
end

--- The session's token count and cost (zot/state after a resume), in the bar.
function M.set_usage(root, usage)
  local chat = M.get(root, false)
  if chat and usage then
    chat.usage = usage
    update_bar(chat)
  end
end

return M
