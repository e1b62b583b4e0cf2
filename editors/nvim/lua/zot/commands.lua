-- The user commands' implementations and completions (plugin/zot.lua
-- only declares them).
local M = {}

local function zot()
  local z = require('zot')
  z.ensure_setup()
  return z
end

-- zot's built-in slash commands, for completion before a client runs.
M.builtin = { 'help', 'clear', 'compact', 'model', 'mode', 'new', 'sessions', 'resume', 'reload-ext', 'skills' }

--- The client of the current root, started for completion if none runs
--- (extension commands exist only once zot has started them): waits a
--- bounded while, then completes what is known.
local function client_for_completion()
  local client = require('zot.client')
  local st = client.current()
  if not st then
    pcall(function()
      zot()
      local root = client.root_for(vim.api.nvim_get_current_buf())
      st = client.with_root(root, function() end)
    end)
  end
  -- Until zot has reported its extensions and none is still starting.
  local function settled()
    local e = st.ready and st.extensions
    if not e or e.loading then
      return false
    end
    for _, x in ipairs(e.extensions or {}) do
      if x.state == 'starting' then
        return false
      end
    end
    return true
  end
  if st and not settled() then
    vim.wait(5000, settled, 20)
  end
  return st
end
M.client_for_completion = client_for_completion

--- Slash command names known for the current root.
function M.command_names()
  local names, seen = {}, {}
  local ok, st = pcall(client_for_completion)
  local list = ok and st and st.commands or {}
  for _, c in ipairs(list) do
    if c.name and not seen[c.name] then
      seen[c.name] = true
      names[#names + 1] = c.name
    end
  end
  for _, n in ipairs(M.builtin) do
    if not seen[n] then
      seen[n] = true
      names[#names + 1] = n
    end
  end
  table.sort(names)
  return names
end

local function complete_commands(arglead)
  local out = {}
  local lead = arglead:gsub('^/', '')
  for _, n in ipairs(M.command_names()) do
    if n:sub(1, #lead) == lead then
      out[#out + 1] = '/' .. n
    end
  end
  return out
end

--- The argument of slash command name: zot/command/complete (an
--- extension's command asks its extension; /model and /mode complete their
--- values). A candidate is the whole argument; the command line completes
--- its last word, so candidates are cut to what follows the typed words.
function M.complete_argument(name, partial)
  local ok, st = pcall(client_for_completion)
  if not ok or not st then
    return {}
  end
  local P = require('zot.protocol')
  local res = require('zot.client').request_sync(st, P.request.command_complete, { name = name, args = partial }, 2500)
  local head = partial:match('^(.*%s)') or ''
  local out = {}
  for _, c in ipairs(res and res.completions or {}) do
    if type(c.value) == 'string' and c.value:sub(1, #head) == head then
      out[#out + 1] = c.value:sub(#head + 1)
    end
  end
  return out
end

--- :ZotCommand completion: the command name, then its argument.
function M.complete_command(arglead, cmdline, _)
  local before = cmdline:gsub('^%s*%S+%s*', '', 1)
  local name, partial = before:match('^/?(%S+)%s+(.*)$')
  if name then
    return M.complete_argument(name, partial)
  end
  return complete_commands(arglead)
end

--- :ZotPrompt completion: slash commands when the text starts with "/".
function M.complete_prompt(arglead, cmdline, _)
  local before = cmdline:gsub("^%s*[%d,.'<>$%%]*%s*%S+%s*", '', 1)
  if before:find('%s') or arglead:sub(1, 1) ~= '/' then
    return {}
  end
  return complete_commands(arglead)
end

function M.complete_mode(arglead)
  return vim.tbl_filter(function(m)
    return m:sub(1, #arglead) == arglead
  end, { 'auto', 'ask', 'readonly' })
end

function M.prompt(opts)
  local range
  if opts.range and opts.range > 0 then
    range = { opts.line1, opts.line2 }
  end
  zot().prompt(opts.args or '', { range = range })
end

function M.command(opts)
  zot().command(opts.args or '')
end

function M.abort(opts)
  zot().abort({ clear_queue = opts.bang })
end

function M.chat()
  zot().toggle_chat()
end

function M.chat_new()
  zot().new_chat()
end

function M.chat_close()
  zot().close_chat()
end

function M.new()
  zot().new_session()
end

function M.sessions()
  zot().sessions()
end

function M.checkpoints()
  zot().with_state(nil, function(state)
    require('zot.checkpoints').pick(state)
  end)
end

function M.model(opts)
  if opts.args and opts.args ~= '' then
    zot().set_model(opts.args)
  else
    zot().models()
  end
end

function M.mode(opts)
  zot().set_mode(opts.args)
end

function M.extensions()
  zot().extensions()
end

function M.reload()
  zot().reload()
end

function M.log()
  require('zot.config')
  require('zot.log').open()
end

function M.mcp(opts)
  zot().mcp(opts)
end

function M.complete_mcp(arglead, cmdline)
  if cmdline:match('ZotMcp%s+%S*$') then
    return vim.tbl_filter(function(c)
      return c:sub(1, #arglead) == arglead
    end, { 'restart' })
  end
  return {}
end

function M.shortcut(opts)
  zot().shortcut(vim.trim(opts.args or ''))
end

--- The keys of the running zot's extension shortcuts.
function M.complete_shortcut(arglead)
  local st = require('zot.client').current()
  local out = {}
  for _, s in ipairs(zot().shortcut_list(st and st.extensions)) do
    if s.key:sub(1, #arglead) == arglead then
      out[#out + 1] = s.key
    end
  end
  return out
end

function M.skills()
  zot().skills()
end

return M
