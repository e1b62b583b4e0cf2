-- Extensions that ask the user and show state (docs/protocol.md,
-- zot/ui/*): zot/ui/request through vim.ui.select / vim.ui.input (confirm
-- is a Yes/No select), zot/ui/status and zot/ui/widget kept per client for
-- require("zot").statusline() and M.widgets().
local util = require('zot.util')

local M = {}

--- Confirm choices.
M.YES = 'Yes'
M.NO = 'No'

local function prompt_of(params)
  local title, msg = tostring(params.title or ''), tostring(params.message or '')
  local p = '[' .. tostring(params.extension or 'zot') .. '] ' .. title
  if msg ~= '' then
    p = p .. (title ~= '' and ': ' or '') .. msg
  end
  return p
end

--- zot/ui/request: answers {value = …} or {cancelled = true}.
---@param params zot.UIRequestParams
function M.request(_, params, _)
  params = params or {}
  local kind = params.kind
  local async, res = util.await(function(resolve)
    local prompt = prompt_of(params)
    if kind == 'confirm' then
      vim.ui.select({ M.YES, M.NO }, { prompt = prompt .. ' ' }, function(choice)
        if choice == nil then
          resolve({ cancelled = true })
        else
          resolve({ value = choice == M.YES })
        end
      end)
    elseif kind == 'select' then
      local options = util.val(params.options) or {}
      vim.ui.select(options, { prompt = prompt .. ' ' }, function(choice)
        resolve(choice and { value = choice } or { cancelled = true })
      end)
    elseif kind == 'input' then
      local default = util.val(params.default)
      vim.ui.input({ prompt = prompt .. ' ', default = default }, function(text)
        resolve(text and { value = text } or { cancelled = true })
      end)
    else
      resolve({ cancelled = true })
    end
  end)
  if not async then
    -- The builtin transport before 0.10 cannot wait: say no UI.
    return { cancelled = true }
  end
  return res
end

local function state_of(ctx)
  return require('zot.client').by_id[ctx.client_id]
end

--- zot/ui/status: text under (extension, key); null removes it.
---@param params zot.UIStatusParams
function M.status(_, params, ctx)
  local st = state_of(ctx)
  if not st or not params then
    return
  end
  st.ext_status = st.ext_status or {}
  local k = tostring(params.extension) .. '/' .. tostring(params.key)
  st.ext_status[k] = util.val(params.text)
  pcall(vim.cmd, 'redrawstatus!')
end

--- zot/ui/widget: lines under (extension, key); null removes them.
---@param params zot.UIWidgetParams
function M.widget(_, params, ctx)
  local st = state_of(ctx)
  if not st or not params then
    return
  end
  st.ext_widgets = st.ext_widgets or {}
  local k = tostring(params.extension) .. '/' .. tostring(params.key)
  st.ext_widgets[k] = util.val(params.lines)
end

local function sorted(t)
  local keys = {}
  for k in pairs(t or {}) do
    keys[#keys + 1] = k
  end
  table.sort(keys)
  return keys
end

--- The extensions' status texts of a client, in key order.
function M.status_texts(st)
  local out = {}
  for _, k in ipairs(sorted(st and st.ext_status)) do
    out[#out + 1] = st.ext_status[k]
  end
  return out
end

--- The extensions' widget lines of a client, in key order.
function M.widget_lines(st)
  local out = {}
  for _, k in ipairs(sorted(st and st.ext_widgets)) do
    for _, l in ipairs(st.ext_widgets[k]) do
      out[#out + 1] = l
    end
  end
  return out
end

return M
