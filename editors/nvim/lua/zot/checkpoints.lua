-- :ZotCheckpoints: the workspace as it was before each prompt
-- (docs/protocol.md, "Checkpoints"). A picker of the checkpoints, then
-- restore the code, the conversation or both, or compare: each changed
-- file in a tab, the checkpoint's text beside the buffer in diff mode.
local P = require('zot.protocol')
local util = require('zot.util')

local M = {}

local function chat()
  return require('zot.chat')
end

local function request(state, method, params, cb)
  require('zot.client').request(state, method, params, function(err, res)
    if err then
      local msg = tostring(err.message or err)
      util.err('zot: ' .. msg)
      chat().note(state.root, msg, 'error')
      return
    end
    cb(res)
  end)
end

--- The checkpoint's text of a file, from its unified diff (checkpoint →
--- now) and the file's lines now: each hunk's new lines are replaced by
--- its old ones.
function M.old_lines(diff, now)
  local out, pos = {}, 1 -- pos: the next line of now not yet copied
  local in_hunk = false
  for line in (diff .. '\n'):gmatch('(.-)\n') do
    local ns = line:match('^@@ %-%d+,?%d* %+(%d+),?%d* @@')
    if ns then
      ns = tonumber(ns)
      -- A hunk that adds to an empty side starts "after" line ns.
      local start = line:match('^@@ %-%d+,?%d* %+%d+,0 @@') and ns + 1 or ns
      while pos < start do
        table.insert(out, now[pos])
        pos = pos + 1
      end
      in_hunk = true
    elseif in_hunk then
      local c = line:sub(1, 1)
      if c == ' ' then
        table.insert(out, line:sub(2))
        pos = pos + 1
      elseif c == '-' then
        table.insert(out, line:sub(2))
      elseif c == '+' then
        pos = pos + 1
      elseif c ~= '\\' then
        in_hunk = false
      end
    end
  end
  while pos <= #now do
    table.insert(out, now[pos])
    pos = pos + 1
  end
  return out
end

--- The file's lines now: its buffer when loaded (unsaved text included),
--- else the disk's.
local function lines_now(path)
  local b = vim.fn.bufnr(path)
  if b > 0 and vim.api.nvim_buf_is_loaded(b) then
    return vim.api.nvim_buf_get_lines(b, 0, -1, false)
  end
  if vim.fn.filereadable(path) == 1 then
    return vim.fn.readfile(path)
  end
  return {}
end

--- Compare: one tab per changed file, the checkpoint's text (a scratch
--- buffer) on the left, the file on the right, in diff mode.
function M.compare(state, id)
  request(state, P.request.checkpoint_diff, { checkpoint = id }, function(res)
    local files = (res and res.files) or {}
    if #files == 0 then
      util.notify('zot: nothing changed since checkpoint ' .. id)
      return
    end
    for _, f in ipairs(files) do
      local path = vim.uri_to_fname(f.uri)
      local now = f.status == 'deleted' and {} or lines_now(path)
      local old = f.status == 'added' and {} or M.old_lines(f.diff, now)
      vim.cmd('tabnew')
      local left = vim.api.nvim_get_current_buf()
      vim.bo[left].buftype = 'nofile'
      vim.bo[left].bufhidden = 'wipe'
      vim.api.nvim_buf_set_name(left, 'zot://checkpoint/' .. id .. '/' .. f.path)
      vim.api.nvim_buf_set_lines(left, 0, -1, false, old)
      vim.bo[left].modifiable = false
      vim.cmd('diffthis')
      if f.status == 'deleted' then
        vim.cmd('rightbelow vnew')
        vim.bo.buftype = 'nofile'
        vim.bo.bufhidden = 'wipe'
        vim.api.nvim_buf_set_name(0, 'zot://deleted/' .. f.path)
      else
        vim.cmd('rightbelow vsplit ' .. vim.fn.fnameescape(path))
      end
      vim.cmd('diffthis')
    end
    util.notify(string.format('zot: %d file(s) changed since checkpoint %s (one tab each)', #files, id))
  end)
end

--- Restores checkpoint id (mode code, conversation or both), then redraws
--- the conversation when it changed.
function M.restore(state, id, mode, cb)
  request(state, P.request.checkpoint_restore, { checkpoint = id, mode = mode }, function(res)
    local note = string.format('Restored checkpoint %s (%s)', id, mode)
    if mode ~= 'conversation' then
      note = note .. string.format(': %d file(s)', #(res.files or {}))
    end
    note = note .. '. Undo: :ZotCheckpoints, the last entry ("before restoring …").'
    local function finish()
      chat().note(state.root, note)
      util.notify('zot: ' .. note)
      if cb then
        cb(res)
      end
    end
    if mode == 'code' then
      return finish()
    end
    require('zot.client').request(state, P.request.messages, nil, function(err, msgs)
      if not err and msgs then
        pcall(chat().render_messages, state.root, msgs.messages)
      end
      finish()
    end)
  end)
end

--- Forks the conversation before the checkpoint's prompt into a new
--- session (zot/session/fork), with its files when with_files.
function M.fork(state, cp, with_files, cb)
  local params = { messageIndex = cp.messageIndex, withFiles = with_files or nil }
  request(state, P.request.session_fork, params, function(res)
    require('zot.client').request(state, P.request.messages, nil, function(err, msgs)
      if not err and msgs then
        pcall(chat().render_messages, state.root, msgs.messages)
      end
      local note = string.format(
        'Forked into session %s (%d messages) from %s%s.',
        tostring(res.sessionId),
        tonumber(res.messageCount) or 0,
        tostring(res.forkedFrom),
        with_files and string.format(', %d file(s) restored', #(res.files or {})) or ''
      )
      chat().note(state.root, note)
      util.notify('zot: ' .. note)
      if cb then
        cb(res)
      end
    end)
  end)
end

local actions = {
  { label = 'Restore code', mode = 'code' },
  { label = 'Restore conversation', mode = 'conversation' },
  { label = 'Restore both', mode = 'both' },
  { label = 'Compare with now' },
  { label = 'Fork a new session here', fork = 'conversation', prompt_only = true },
  { label = 'Fork a new session here, with these files', fork = 'files', prompt_only = true },
}

--- The picker: a checkpoint, then what to do with it.
function M.pick(state)
  request(state, P.request.checkpoints, nil, function(res)
    local list = (res and res.checkpoints) or {}
    if #list == 0 then
      util.notify('zot: no checkpoints yet (one is taken before each prompt)')
      return
    end
    vim.ui.select(list, {
      prompt = 'zot: checkpoint',
      format_item = function(cp)
        local what = cp.kind == 'prompt' and ('before "' .. tostring(cp.prompt) .. '"') or tostring(cp.prompt)
        return string.format(
          '%s  %s  #%d  %s  (%d file(s) differ)',
          tostring(cp.id),
          tostring(cp.time):sub(12, 19),
          tonumber(cp.messageIndex) or 0,
          what,
          tonumber(cp.filesChanged) or 0
        )
      end,
    }, function(cp)
      if not cp then
        return
      end
      local offered = vim.tbl_filter(function(a)
        return not a.prompt_only or cp.kind == 'prompt'
      end, actions)
      vim.ui.select(offered, {
        prompt = 'zot: checkpoint ' .. cp.id,
        format_item = function(a)
          return a.label
        end,
      }, function(a)
        if not a then
          return
        end
        if a.mode then
          M.restore(state, cp.id, a.mode)
        elseif a.fork then
          M.fork(state, cp, a.fork == 'files')
        else
          M.compare(state, cp.id)
        end
      end)
    end)
  end)
end

return M
