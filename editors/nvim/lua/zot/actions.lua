-- Actions on the chat's answers and messages (keymaps in the chat
-- buffer): a code block yanked, inserted into the last window, applied to
-- its file (zot/applyCode: reviewed in "ask" mode like the model's edits);
-- the last answer retried (zot/retry); an earlier message edited and sent
-- again (zot/resend, through the input).
local P = require('zot.protocol')
local util = require('zot.util')

local api = vim.api

local M = {}

local function chat_mod()
  return require('zot.chat')
end

local function block_here(chat)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local b = chat_mod().code_block_at(chat, row)
  if not b then
    util.notify('zot: no code block here (put the cursor in one)', vim.log.levels.WARN)
  end
  return b
end

--- Yanks the code block under the cursor (linewise, into v:register).
function M.yank_code(chat)
  local b = block_here(chat)
  if not b then
    return
  end
  vim.fn.setreg(vim.v.register, b.lines, 'l')
  util.notify(string.format('zot: yanked %d lines', #b.lines))
  return b
end

--- Inserts the code block into the last window that showed a file, at its
--- cursor: replacing the cursor's line when it is blank, else below it.
--- The focus moves there (u undoes it).
function M.insert_code(chat)
  local b = block_here(chat)
  if not b then
    return
  end
  local win = chat_mod().last_window()
  if not win then
    util.notify('zot: no window shows a file to insert into', vim.log.levels.WARN)
    return
  end
  local buf = api.nvim_win_get_buf(win)
  if not vim.bo[buf].modifiable then
    util.notify('zot: ' .. vim.fn.bufname(buf) .. ' is not modifiable', vim.log.levels.WARN)
    return
  end
  local row = api.nvim_win_get_cursor(win)[1]
  local line = api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ''
  local at
  if vim.trim(line) == '' then
    api.nvim_buf_set_lines(buf, row - 1, row, false, b.lines)
    at = row
  else
    api.nvim_buf_set_lines(buf, row, row, false, b.lines)
    at = row + 1
  end
  api.nvim_set_current_win(win)
  pcall(api.nvim_win_set_cursor, win, { at, 0 })
  return b
end

--- Applies the code block to a file (asked, with the file the answer
--- names as the default) through zot/applyCode.
function M.apply_code(chat, path)
  local b = block_here(chat)
  if not b then
    return
  end
  local function apply(p)
    p = p and vim.trim(p) or ''
    if p == '' then
      return
    end
    local dir = util.dir_of(chat.root)
    local full = p:match('^/') and p or (dir .. '/' .. p)
    if p:sub(1, 1) == '~' then
      full = vim.fn.expand(p)
    end
    local z = require('zot')
    z.with_state({ root = chat.root }, function(state)
      local params = { uri = vim.uri_from_fname(full), text = table.concat(b.lines, '\n') }
      require('zot.client').request(state, P.request.apply_code, params, function(err, res)
        if err then
          util.err('apply: ' .. tostring(err.message or err))
          return
        end
        res = res or {}
        local msg = util.val(res.message) or (res.applied and 'applied' or 'not applied')
        util.notify('zot: ' .. msg, res.applied and vim.log.levels.INFO or vim.log.levels.WARN)
        chat_mod().note(chat.root, (res.applied and 'Applied: ' or 'Not applied: ') .. msg)
        M.last_apply = res
      end)
    end)
  end
  if path then
    return apply(path)
  end
  local guess = chat_mod().code_block_file(chat, b)
  if not guess then
    local w = chat_mod().last_window()
    local name = w and require('zot.client').buf_path(api.nvim_win_get_buf(w))
    guess = name
  end
  local dir = util.dir_of(chat.root)
  local default = guess and guess:sub(1, #dir + 1) == dir .. '/' and guess:sub(#dir + 2) or guess
  vim.ui.input({ prompt = 'zot: apply the code block to ', default = default or '', completion = 'file' }, apply)
  return b
end

--- Sends the last prompt again (zot/retry): its old answer goes.
function M.retry(root)
  local z = require('zot')
  z.with_state({ root = root }, function(state)
    -- The last prompt and its answer leave the view before the request
    -- (the new run's events may come before zot's answer); they come back
    -- as they were if zot refuses (nothing to retry since a /compact).
    local cut = chat_mod().truncate_at(root, nil)
    require('zot.client').request(state, P.request.retry, nil, function(err, res)
      if err then
        chat_mod().untruncate(root, cut)
        util.err('retry: ' .. tostring(err.message or err))
        return
      end
      chat_mod().on_started(state, res)
    end)
  end)
end

--- The selection a message had without a #selection in its text (from
--- :ZotPrompt with a range), attached again: the same lines, read from
--- the buffer (or disk) when it is sent. Its other attachments come back
--- from the #references in the text.
local function selection_of(m)
  if m.text:find('#selection', 1, true) then
    return nil
  end
  for _, c in ipairs(m.chips or {}) do
    if c.kind == 'selection' and c.uri and c.lines then
      local l1, l2 = c.lines:match('^(%d+)%-(%d+)$')
      l1, l2 = tonumber(l1 or c.lines), tonumber(l2 or c.lines)
      if l1 and l2 then
        return {
          kind = 'selection',
          uri = c.uri,
          label = c.label,
          range = { start = { line = l1 - 1, character = 0 }, ['end'] = { line = l2, character = 0 } },
        }
      end
    end
  end
  return nil
end

--- Edit and resend: the message under the cursor goes into the input;
--- sending it replaces it and everything after it.
function M.edit(chat)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local m = chat_mod().user_message_at(chat, row)
  if m and m.compacted then
    util.notify(
      'zot: this message is from before the conversation was compacted; it cannot be edited now',
      vim.log.levels.WARN
    )
    return
  end
  if not (m and m.index) then
    util.notify('zot: put the cursor on one of your messages (## You) to edit it', vim.log.levels.WARN)
    return
  end
  -- The line zot added for :ZotPrompt's file context is not the user's.
  local text = m.text:gsub('\n*%(Editor context: the user is looking at [^\n]*%)$', '')
  require('zot.input').edit(chat.root, m.index, text, selection_of(m))
  return m
end

--- The keys of the chat, for g?.
function M.help_lines()
  local k = require('zot.config').get().chat.keys
  return {
    'In the chat:',
    string.format('  %-6s yank the code block under the cursor', k.yank_code),
    string.format('  %-6s insert it into the last window, at its cursor', k.insert_code),
    string.format('  %-6s apply it to a file (reviewed in ask mode)', k.apply_code),
    string.format('  %-6s retry the last answer', k.retry),
    string.format('  %-6s edit one of your messages and resend it', k.edit),
    '  <CR>   open the file under the cursor / toggle details;  gf too',
    '  i a o  write a prompt (the input below);  <C-c> abort;  q close',
    'In the input:',
    string.format(
      '  %s (normal) or %s send;  %s/%s (or <C-p>/<C-n>) history',
      k.send_normal,
      k.send,
      k.history_prev,
      k.history_next
    ),
    '  #buffer #file:<path> #selection #diagnostics #mcp:<server>:<uri>  attach context (<C-x><C-o> completes)',
  }
end

return M
