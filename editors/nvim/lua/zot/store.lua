-- What the plugin keeps between Neovim sessions, per workspace root: the
-- last conversation (restored when the chat comes back), the input's
-- draft and its prompt history. One JSON file in stdpath("data")/zot;
-- every write reads it again first, so two Neovims on different
-- workspaces do not undo each other's entries.
local compat = require('zot.compat')

local M = {}

--- Prompts kept in the history of a root.
M.max_history = 200

function M.path()
  return vim.fn.stdpath('data') .. '/zot/workspaces.json'
end

local function read_all()
  local f = io.open(M.path(), 'r')
  if not f then
    return {}
  end
  local s = f:read('*a')
  f:close()
  local ok, v = pcall(vim.json.decode, s)
  if not ok or type(v) ~= 'table' then
    return {}
  end
  return v
end

local function write_all(all)
  local path = M.path()
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local tmp = path .. '.' .. vim.fn.getpid() .. '.tmp'
  local f, err = io.open(tmp, 'w')
  if not f then
    return false, err
  end
  f:write(vim.json.encode(all))
  f:close()
  -- rename: a reader never sees half a file.
  local ok, e = compat.uv.fs_rename(tmp, path)
  if not ok then
    os.remove(tmp)
    return false, e
  end
  return true
end

--- The entry of root: { session?, draft?, history? }.
function M.get(root)
  local e = read_all()[root]
  if type(e) ~= 'table' then
    return {}
  end
  return e
end

--- Sets fields of root's entry (vim.NIL or false clears a field).
function M.update(root, fields)
  local all = read_all()
  local e = type(all[root]) == 'table' and all[root] or {}
  local changed = false
  for k, v in pairs(fields) do
    if v == false or v == vim.NIL then
      v = nil
    end
    if not vim.deep_equal(e[k], v) then
      e[k] = v
      changed = true
    end
  end
  if not changed then
    return true
  end
  all[root] = next(e) and e or nil
  return write_all(all)
end

--- Adds a prompt to root's history (newest last; a repeat moves to the end).
function M.add_history(root, text)
  local h = M.get(root).history
  h = type(h) == 'table' and h or {}
  for i = #h, 1, -1 do
    if h[i] == text then
      table.remove(h, i)
    end
  end
  h[#h + 1] = text
  while #h > M.max_history do
    table.remove(h, 1)
  end
  M.update(root, { history = h })
  return h
end

return M
