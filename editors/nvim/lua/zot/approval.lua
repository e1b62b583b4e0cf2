-- Questions zot asks with window/showMessageRequest (bash approvals,
-- writes outside the workspace, extension trust). A multi-line question
-- (a command) is shown in full in a float, every line of it, while the
-- choices are asked; when it is taller than the float can show, the only
-- choices are "Show full command" and the deny action, and "Show full
-- command" moves into the float to read it all (<CR> or q: back to the
-- choices).
local M = {}

M.SHOW_FULL = 'Show full command'

-- The safe action of each question (zot sends it first).
local deny_titles =
  { ['Deny'] = true, ["Don't run"] = true, ['Reject'] = true, ['Keep guarding'] = true, ['No'] = true }

local function lines_of(msg)
  local out = {}
  for line in (msg .. '\n'):gmatch('(.-)\n') do
    out[#out + 1] = line
  end
  return out
end

--- The float's size for text: wrapped rows it needs, and the size it gets.
local function layout(lines)
  local max_w = math.max(20, vim.o.columns - 8)
  local max_h = math.max(3, vim.o.lines - 8)
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width, max_w)
  local rows = 0
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  return width, math.min(rows, max_h), rows <= max_h
end

--- Opens the float with every line of msg. Returns its window, buffer and
--- whether all of it is visible at once.
function M.open(msg)
  local lines = lines_of(msg)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.b[buf].zot_approval = true
  local width, height, fits = layout(lines)
  local opts = {
    relative = 'editor',
    row = 1,
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
    focusable = true,
    zindex = 200,
  }
  if vim.fn.has('nvim-0.9') == 1 then
    opts.title = ' zot '
  end
  local win = vim.api.nvim_open_win(buf, false, opts)
  vim.wo[win].wrap = true
  return win, buf, fits
end

local function close(win)
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
end

--- Asks msg with the choices titles; on_choice(index or nil).
function M.ask(msg, titles, on_choice)
  if not msg:find('\n', 1, true) and vim.fn.strdisplaywidth(msg) < vim.o.columns - 20 then
    vim.ui.select(titles, { prompt = 'zot: ' .. msg .. ' ' }, function(_, idx)
      on_choice(idx)
    end)
    return
  end
  local win, buf, fits = M.open(msg)
  local first = lines_of(msg)[1]
  local function finish(idx)
    close(win)
    on_choice(idx)
  end
  local function ask_all()
    vim.ui.select(
      titles,
      { prompt = 'zot: ' .. (fits and msg or first .. ' (shown in full in the float)') .. ' ' },
      function(_, idx)
        finish(idx)
      end
    )
  end
  if fits then
    ask_all()
    return
  end
  local deny
  for i, t in ipairs(titles) do
    if deny_titles[t] then
      deny = i
    end
  end
  local short = { M.SHOW_FULL, deny and titles[deny] or 'Deny' }
  vim.ui.select(short, { prompt = 'zot: ' .. first .. ' (too long to show here) ' }, function(_, idx)
    if idx ~= 1 then
      finish(idx == 2 and deny or nil)
      return
    end
    if not vim.api.nvim_win_is_valid(win) then
      win, buf = M.open(msg)
    end
    local hint = 'zot: read the whole command, then <CR> or q to choose'
    if vim.fn.has('nvim-0.10') == 1 then
      vim.api.nvim_win_set_config(win, { footer = ' ' .. hint:sub(6) .. ' ', footer_pos = 'center' })
    end
    vim.api.nvim_echo({ { hint } }, false, {})
    local done = false
    local function back()
      if done then
        return
      end
      done = true
      if vim.api.nvim_get_current_win() == win then
        vim.cmd('wincmd p')
      end
      ask_all()
    end
    vim.keymap.set('n', '<CR>', back, { buffer = buf, nowait = true })
    vim.keymap.set('n', 'q', back, { buffer = buf, nowait = true })
    vim.api.nvim_set_current_win(win)
  end)
end

return M
