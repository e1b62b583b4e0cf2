-- zot/reviewEdit (permission "ask"): the proposal opens in a new tab next
-- to the current text, side by side with :diffthis (or as a unified diff).
-- ga accepts (your edits to the proposal included), gr rejects, gR rejects
-- with a note for the model; :w in the proposal accepts too; closing the
-- tab rejects.
local config = require('zot.config')
local util = require('zot.util')

local api = vim.api

local M = {}

--- Reviews waiting for a decision.
M.active = {}
local seq = 0

--- The review buffer's name, which the tab line shows: "zot review:
--- main.go" (the base name: a path would be shortened to "z/m/main.go").
local function review_name(r, side)
  local name = 'zot review: ' .. vim.fn.fnamemodify(r.fname, ':t') .. (side and (' (' .. side .. ')') or '')
  if vim.fn.bufexists(name) == 1 then
    name = name .. ' [' .. r.n .. ']'
  end
  return name
end

local function scratch(name, lines, modifiable, acwrite)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = acwrite and 'acwrite' or 'nofile'
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = modifiable
  vim.bo[buf].modified = false
  return buf
end

local function detect_filetype(buf, fname)
  local src = vim.fn.bufnr(fname)
  if src > 0 and vim.bo[src].filetype ~= '' then
    vim.bo[buf].filetype = vim.bo[src].filetype
    return
  end
  pcall(api.nvim_buf_call, buf, function()
    vim.cmd('silent! doautocmd filetypedetect BufRead ' .. vim.fn.fnameescape(fname))
  end)
end

local function hint(r)
  local k = config.get().review.keys
  if r.layout == 'inline' then
    return string.format(
      'zot review %s: %s accept · %s reject · %s reject with a note · ge edit',
      r.rel,
      k.accept,
      k.reject,
      k.reject_with_message
    )
  end
  return string.format(
    'zot review %s: %s or :w accept (your edits included) · %s reject · %s reject with a note',
    r.rel,
    k.accept,
    k.reject,
    k.reject_with_message
  )
end

local function set_hint(r, win)
  local text = ' ' .. hint(r):gsub('%%', '%%%%')
  pcall(function()
    vim.wo[win][require('zot.compat').has_winbar and 'winbar' or 'statusline'] = text
  end)
end

local function close_ui(r)
  local tab = r.tab
  r.tab = nil
  if tab and api.nvim_tabpage_is_valid(tab) then
    if #api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, 'tabclose! ' .. api.nvim_tabpage_get_number(tab))
    else
      for _, w in ipairs(api.nvim_tabpage_list_wins(tab)) do
        pcall(api.nvim_win_close, w, true)
      end
    end
  end
  for _, b in ipairs(r.bufs or {}) do
    if api.nvim_buf_is_valid(b) then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
  r.bufs = {}
end

local function proposal_text(r)
  if not (r.new_buf and api.nvim_buf_is_valid(r.new_buf)) then
    return r.params.newText
  end
  local lines = api.nvim_buf_get_lines(r.new_buf, 0, -1, false)
  local text = table.concat(lines, '\n')
  if r.eol then
    text = text .. '\n'
  end
  return text
end

local function finish(r, result)
  if r.decided then
    return
  end
  r.decided = true
  for i, x in ipairs(M.active) do
    if x == r then
      table.remove(M.active, i)
      break
    end
  end
  close_ui(r)
  r.resolve(result)
end

function M.accept(r)
  r = r or M.current()
  if not r then
    return
  end
  local text = proposal_text(r)
  local res = { decision = 'accept' }
  if text ~= (r.params.newText or '') then
    res.text = text
  end
  finish(r, res)
end

function M.reject(r, message)
  r = r or M.current()
  if not r then
    return
  end
  finish(r, { decision = 'reject', message = message })
end

function M.reject_with_message(r)
  r = r or M.current()
  if not r then
    return
  end
  -- The model is told "rejected" and these words, verbatim, or no reason:
  -- an empty answer rejects without one; Esc (nil) goes back to the review.
  vim.ui.input({ prompt = 'zot: why reject? (optional; Esc: back to the review) ' }, function(msg)
    if msg == nil then
      return
    end
    msg = vim.trim(msg)
    M.reject(r, msg ~= '' and msg or nil)
  end)
end

--- The review of the current buffer, else the oldest open one.
function M.current()
  local buf = api.nvim_get_current_buf()
  for _, r in ipairs(M.active) do
    for _, b in ipairs(r.bufs or {}) do
      if b == buf then
        return r
      end
    end
  end
  return M.active[1]
end

local function map_keys(r, buf)
  local k = config.get().review.keys
  local function map(lhs, f, desc)
    if lhs and lhs ~= '' then
      vim.keymap.set('n', lhs, f, { buffer = buf, silent = true, nowait = true, desc = desc })
    end
  end
  map(k.accept, function()
    M.accept(r)
  end, 'zot: accept the change')
  map(k.reject, function()
    M.reject(r)
  end, 'zot: reject the change')
  map(k.reject_with_message, function()
    M.reject_with_message(r)
  end, 'zot: reject with a note')
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      if not r.decided and vim.tbl_contains(r.bufs or {}, buf) then
        vim.schedule(function()
          M.reject(r, 'the user closed the review')
        end)
      end
    end,
  })
end

local function open_diff(r)
  local p = r.params
  local old_lines = util.lines(p.oldText or '')
  local new_lines, eol = util.lines(p.newText or '')
  r.eol = eol
  vim.cmd('tab split')
  r.tab = api.nvim_get_current_tabpage()
  local wl = api.nvim_get_current_win()
  local old_buf = scratch(review_name(r, 'current'), old_lines, false, false)
  api.nvim_win_set_buf(wl, old_buf)
  vim.cmd('rightbelow vsplit')
  local wr = api.nvim_get_current_win()
  local new_buf = scratch(review_name(r), new_lines, true, true)
  api.nvim_win_set_buf(wr, new_buf)
  r.new_buf = new_buf
  r.bufs = { old_buf, new_buf }
  for _, b in ipairs(r.bufs) do
    detect_filetype(b, r.fname)
    api.nvim_buf_set_var(b, 'zot_root', r.state and r.state.root or vim.fn.getcwd())
    map_keys(r, b)
  end
  api.nvim_create_autocmd('BufWriteCmd', {
    buffer = new_buf,
    callback = function()
      vim.bo[new_buf].modified = false
      M.accept(r)
    end,
  })
  for _, w in ipairs({ wl, wr }) do
    api.nvim_win_call(w, function()
      vim.cmd('diffthis')
    end)
    set_hint(r, w)
  end
  api.nvim_set_current_win(wr)
end

local function open_inline(r)
  local p = r.params
  local _, eol = util.lines(p.newText or '')
  r.eol = eol
  local diff = ((vim.text and vim.text.diff) or vim.diff)(
    p.oldText or '',
    p.newText or '',
    { result_type = 'unified', ctxlen = 3 }
  ) or ''
  local lines = { '--- a/' .. r.rel, '+++ b/' .. r.rel }
  vim.list_extend(lines, (util.lines(diff)))
  vim.cmd('tab split')
  r.tab = api.nvim_get_current_tabpage()
  local buf = scratch(review_name(r, 'diff'), lines, false, false)
  vim.bo[buf].filetype = 'diff'
  api.nvim_win_set_buf(0, buf)
  r.bufs = { buf }
  api.nvim_buf_set_var(buf, 'zot_root', r.state and r.state.root or vim.fn.getcwd())
  map_keys(r, buf)
  vim.keymap.set('n', 'ge', function()
    -- Switch to the editable side-by-side view of the same review.
    local bufs = r.bufs
    r.bufs = {}
    local tab = r.tab
    r.layout = 'diff'
    open_diff(r)
    if tab and api.nvim_tabpage_is_valid(tab) then
      pcall(vim.cmd, 'tabclose! ' .. api.nvim_tabpage_get_number(tab))
    end
    for _, b in ipairs(bufs) do
      if api.nvim_buf_is_valid(b) then
        pcall(api.nvim_buf_delete, b, { force = true })
      end
    end
  end, { buffer = buf, silent = true, desc = 'zot: edit the proposal' })
  set_hint(r, api.nvim_get_current_win())
end

--- Opens a review; resolve(result) is called with the decision.
function M.open(state, params, resolve)
  seq = seq + 1
  local fname = vim.uri_to_fname(params.uri or '')
  local r = {
    n = seq,
    state = state,
    params = params,
    resolve = resolve,
    fname = fname,
    rel = vim.fn.fnamemodify(fname, ':~:.'),
    layout = config.get().review.layout,
  }
  table.insert(M.active, r)
  local ok, e = pcall(r.layout == 'inline' and open_inline or open_diff, r)
  if not ok then
    util.err('review: ' .. tostring(e))
    -- message is only ever the user's own words (zot quotes it to the model).
    finish(r, { decision = 'reject' })
    return r
  end
  pcall(api.nvim_exec_autocmds, 'User', { pattern = 'ZotReview', modeline = false })
  return r
end

--- Without a coroutine to wait in (a forced builtin transport on Neovim
--- < 0.10): show the diff and ask with a blocking confirm().
function M.blocking(state, params)
  local result
  local r = M.open(state, params, function(res)
    result = res
  end)
  if result then
    return result
  end
  vim.cmd('redraw')
  local choice = vim.fn.confirm('zot: apply the change to ' .. r.rel .. '?', '&Accept\n&Reject', 1)
  if choice == 1 then
    M.accept(r)
  else
    M.reject(r)
  end
  return result
end

--- A run ended: zot no longer waits for its reviews.
function M.run_done(state, _)
  for _, r in ipairs(vim.list_slice(M.active, 1)) do
    if r.state == state then
      finish(r, { decision = 'reject' })
    end
  end
end

function M.cancel_all(state)
  M.run_done(state)
end

return M
