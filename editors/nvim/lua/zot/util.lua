local M = {}

local levels = vim.log.levels

--- vim.notify with zot's title.
function M.notify(msg, level)
  vim.notify(msg, level or levels.INFO, { title = 'zot' })
end

function M.err(msg)
  M.notify('zot: ' .. msg, levels.ERROR)
end

--- Runs start(resolve) and returns what resolve got. Inside a coroutine
--- (a server request handler on Neovim 0.10+, or under zot's transport)
--- it yields until resolve is called, so the editor stays usable;
--- elsewhere it returns nothing and the caller falls back.
--- @return boolean async, any ...
function M.await(start)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return false
  end
  if coroutine.isyieldable and not coroutine.isyieldable() then
    return false
  end
  local done, waiting, res = false, false, nil
  start(function(...)
    if done then
      return
    end
    done = true
    res = { n = select('#', ...), ... }
    if waiting then
      local ok, e = coroutine.resume(co)
      if not ok then
        M.err('internal error: ' .. tostring(e))
      end
    end
  end)
  if not done then
    waiting = true
    coroutine.yield()
  end
  return true, unpack(res, 1, res.n)
end

--- Reads a JSON-ish value that may be vim.NIL.
function M.val(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

--- Text of wire content blocks ([{type="text", text=...}, ...]).
function M.content_text(content)
  content = M.val(content)
  if type(content) == 'string' then
    return content
  end
  if type(content) ~= 'table' then
    return ''
  end
  local parts = {}
  for _, c in ipairs(content) do
    if type(c) == 'table' then
      if c.type == 'text' and type(c.text) == 'string' then
        parts[#parts + 1] = c.text
      elseif c.type == 'image' then
        parts[#parts + 1] = string.format('[image %s]', tostring(c.mime_type or c.mimeType or ''))
      elseif c.type == 'tool_result' then
        parts[#parts + 1] = M.content_text(c.content)
      end
    end
  end
  return table.concat(parts, '\n')
end

function M.truncate(s, n)
  s = tostring(s or '')
  if vim.fn.strchars(s) > n then
    return vim.fn.strcharpart(s, 0, n - 1) .. '…'
  end
  return s
end

function M.first_line(s)
  s = tostring(s or '')
  local nl = s:find('\n', 1, true)
  if nl then
    return s:sub(1, nl - 1)
  end
  return s
end

--- Splits text into buffer lines; reports whether it ended with a newline.
function M.lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  local eol = false
  if #lines > 1 and lines[#lines] == '' then
    lines[#lines] = nil
    eol = true
  end
  return lines, eol
end

function M.human(n)
  n = tonumber(n) or 0
  if n >= 1e6 then
    return string.format('%.1fM', n / 1e6)
  elseif n >= 1e3 then
    return string.format('%.1fk', n / 1e3)
  end
  return tostring(math.floor(n))
end

-- Several chats of one workspace (:ZotChatNew): each is a client of its
-- own, keyed by the workspace root plus "#zot-chat-N"; the first chat's key
-- is the root itself.
local CHAT_SUFFIX = '#zot%-chat%-%d+$'

--- The workspace directory of a chat key (the key without "#zot-chat-N").
function M.dir_of(key)
  return (key:gsub(CHAT_SUFFIX, ''))
end

--- Whether key is a chat of its own beside the workspace's first one.
function M.is_extra_chat(key)
  return key:find(CHAT_SUFFIX) ~= nil
end

return M
