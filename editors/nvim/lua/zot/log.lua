-- :ZotLog — what zot wrote: the server's stderr (its last lines, kept by
-- zot's transport; with transport = "builtin" Neovim's LSP log has it) and
-- the extensions' logs in $ZOT_HOME/logs, in one scratch buffer.
local compat = require('zot.compat')
local config = require('zot.config')

local M = {}

--- zot's home directory as `zot` computes it (agent/home): $ZOT_HOME
--- (setup's cmd_env first), else the XDG state directory.
function M.home()
  local o = config.get()
  local env = o.cmd_env or {}
  local h = env.ZOT_HOME or os.getenv('ZOT_HOME')
  if h and h ~= '' then
    return h
  end
  local home = compat.uv.os_homedir()
  if vim.fn.has('mac') == 1 then
    return home .. '/Library/Application Support/zot'
  end
  local xdg = os.getenv('XDG_STATE_HOME')
  if xdg and xdg ~= '' then
    return xdg .. '/zot'
  end
  return home .. '/.local/state/zot'
end

function M.dir()
  return M.home() .. '/logs'
end

local function tail(path, n)
  local ok, lines = pcall(vim.fn.readfile, path, '', -n)
  return ok and lines or {}
end

--- The lines :ZotLog shows.
function M.lines()
  local client = require('zot.client')
  local out = {}
  local st = client.current()
  out[#out + 1] = '# zot lsp (stderr)'
  if not st then
    out[#out + 1] = 'no zot runs for ' .. client.root_for(vim.api.nvim_get_current_buf())
  else
    local c = client.lsp(st)
    local rpc = c and c.rpc
    if rpc and type(rpc.stderr) == 'function' then
      local text = rpc.stderr()
      vim.list_extend(
        out,
        text ~= '' and vim.split(text, '\n', { plain = true, trimempty = true }) or { '(nothing yet)' }
      )
    else
      local path = vim.lsp.get_log_path and vim.lsp.get_log_path() or '?'
      out[#out + 1] = 'transport = "builtin": zot\'s stderr is in Neovim\'s LSP log, ' .. path
    end
  end
  local dir = M.dir()
  out[#out + 1] = ''
  out[#out + 1] = '# extensions (' .. dir .. ')'
  local files = vim.fn.glob(dir .. '/*.log', false, true)
  table.sort(files)
  if #files == 0 then
    out[#out + 1] = 'no logs yet'
  end
  for _, f in ipairs(files) do
    out[#out + 1] = ''
    out[#out + 1] = '## ' .. f
    local lines = tail(f, 200)
    vim.list_extend(out, #lines > 0 and lines or { '(empty)' })
  end
  return out
end

--- Opens (or refreshes) the log buffer in a split.
function M.open()
  local name = 'zot log'
  local buf = vim.fn.bufnr(name)
  if buf < 0 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    pcall(vim.api.nvim_buf_set_name, buf, name)
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.lines())
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'log'
  local wins = vim.fn.win_findbuf(buf)
  if #wins > 0 then
    vim.api.nvim_set_current_win(wins[1])
  else
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  end
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
  return buf
end

return M
