-- Options of require("zot").setup(); see :help zot-options.
local M = {}

--- The plugin's directory (editors/nvim of the repository): a build step
--- (lazy.nvim's `build`) puts zot in its bin/.
M.plugin_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h')

M.defaults = {
  -- The server command. Extra flags (--ext DIR, --no-session …) go here too.
  -- A bare "zot" is found as config.server() says: vim.g.zot_server_path,
  -- else the plugin's bin/zot, else PATH.
  cmd = { 'zot', 'lsp' },
  -- Extra environment for the zot process (a table of NAME = value).
  cmd_env = nil,
  -- initializationOptions: nil leaves zot's own default / flags.
  provider = nil,
  model = nil,
  reasoning = nil, -- "off" | "low" | "medium" | "high": how much the model thinks
  api_key = nil,
  base_url = nil,
  permission = nil, -- "auto" | "ask" | "readonly"
  ext = nil, -- list of extension directories
  max_steps = nil,
  append_system_prompt = nil,
  resume = nil, -- a session id or "latest"
  add_dirs = nil, -- directories outside the workspace zot may write without asking
  mcp_config = nil, -- list of MCP configuration files (as --mcp-config)
  no_mcp = nil, -- true: start no MCP servers
  pi_flags = nil, -- pi extensions' flags (registerFlag): { name = value }, as --flag name=value
  -- The workspace root of a buffer: a function(bufnr) -> path, a fixed
  -- path, or nil to search upwards for root_markers (else the cwd).
  root_dir = nil,
  root_markers = { '.git', '.zot', 'go.mod', 'package.json', 'Cargo.toml', 'pyproject.toml', 'Makefile' },
  -- Send the current file as context with :ZotPrompt (no range).
  send_file_context = true,
  chat = {
    layout = 'vertical', -- "vertical" | "horizontal" | "float"
    size = 0.4, -- columns/lines (>1) or a fraction of the editor
    follow = true, -- keep the cursor at the end while text streams in
    flush_ms = 24, -- streamed text is coalesced and drawn at most this often (an answer's first text at once)
    max_detail_lines = 200, -- lines of a tool result kept in its fold
    open_on_prompt = true,
    input_height = 5, -- lines of the input window below the chat
    -- Reopening the chat (or a new Neovim on the workspace) brings back the
    -- last conversation instead of an empty session.
    restore = true,
    keys = {
      send = '<C-s>', -- insert and normal mode, in the input
      send_normal = '<CR>', -- normal mode, in the input
      history_prev = '<Up>', -- normal mode, in the input (<C-p> too)
      history_next = '<Down>', -- (<C-n> too)
      yank_code = 'gy', -- in the chat, on a code block
      insert_code = 'gp', -- into the last window, at its cursor
      apply_code = 'ga', -- to its file, through zot's edit path
      retry = 'gr', -- the last answer again
      edit = 'ge', -- on one of your messages: edit it and resend
      help = 'g?',
    },
  },
  review = {
    layout = 'diff', -- "diff" (side by side, editable proposal) | "inline" (unified diff)
    keys = { accept = 'ga', reject = 'gr', reject_with_message = 'gR' },
  },
  panel = {
    border = 'rounded',
  },
  -- "auto": Neovim's transport where server requests may wait for the user
  -- (0.10+), zot's own before; "builtin" | "zot" force one.
  transport = 'auto',
  -- didChange debounce in ms. 0 keeps zot's view of a buffer exact when it
  -- edits right after you typed.
  debounce_text_changes = 0,
  -- ms to wait for zot to exit on VimLeavePre before killing it.
  stop_timeout = 3000,
}

--- Options whose default is nil (not in M.defaults).
M.unset = {
  'cmd_env',
  'provider',
  'model',
  'reasoning',
  'api_key',
  'base_url',
  'permission',
  'ext',
  'max_steps',
  'append_system_prompt',
  'resume',
  'add_dirs',
  'mcp_config',
  'no_mcp',
  'pi_flags',
  'root_dir',
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  local o = M.options
  if type(o.cmd) == 'string' then
    o.cmd = { o.cmd, 'lsp' }
  end
  if opts and opts.cmd and type(opts.cmd) == 'table' then
    o.cmd = vim.deepcopy(opts.cmd) -- lists are replaced, not merged
  end
  if opts and opts.root_markers then
    o.root_markers = vim.deepcopy(opts.root_markers)
  end
  if o.permission and not vim.tbl_contains({ 'auto', 'ask', 'readonly' }, o.permission) then
    error('zot: permission must be "auto", "ask" or "readonly", not ' .. vim.inspect(o.permission))
  end
  if o.reasoning and not vim.tbl_contains({ 'off', 'low', 'medium', 'high' }, o.reasoning) then
    error('zot: reasoning must be "off", "low", "medium" or "high", not ' .. vim.inspect(o.reasoning))
  end
  if o.pi_flags ~= nil then
    if type(o.pi_flags) ~= 'table' then
      error('zot: pi_flags must be a table of flag = value, not ' .. vim.inspect(o.pi_flags))
    end
    for k, v in pairs(o.pi_flags) do
      local t = type(v)
      if type(k) ~= 'string' or (t ~= 'string' and t ~= 'boolean' and t ~= 'number') then
        error('zot: pi_flags.' .. tostring(k) .. ' must be a string, a boolean or a number, not ' .. vim.inspect(v))
      end
    end
  end
  if not vim.tbl_contains({ 'vertical', 'horizontal', 'float' }, o.chat.layout) then
    error('zot: chat.layout must be "vertical", "horizontal" or "float"')
  end
  return o
end

function M.get()
  return M.options
end

local windows = vim.fn.has('win32') == 1

--- Where the binary of source came from, for messages and :checkhealth.
M.source_names = {
  setup = 'setup({ cmd })',
  ['g:zot_server_path'] = 'vim.g.zot_server_path',
  plugin = "built in the plugin's directory",
  PATH = 'PATH',
}

--- The zot command to run and where its binary came from, first found:
--- setup({ cmd }) naming a binary other than a bare "zot" ("setup");
--- vim.g.zot_server_path ("g:zot_server_path"); zot built into the
--- plugin's bin/ by the plugin manager's build step ("plugin"); `zot` on
--- PATH ("PATH"). A setting the user made wins over what was found, as
--- zot.serverPath does in VS Code. The flags of cmd are kept.
--- @return string[] cmd, string source
function M.server()
  local cmd = vim.deepcopy(M.options.cmd)
  if cmd[1] ~= 'zot' then
    return cmd, 'setup'
  end
  local g = vim.g.zot_server_path
  if type(g) == 'string' and g ~= '' then
    cmd[1] = vim.fn.expand(g)
    return cmd, 'g:zot_server_path'
  end
  local built = M.plugin_dir .. '/bin/' .. (windows and 'zot.exe' or 'zot')
  if vim.fn.executable(built) == 1 then
    cmd[1] = built
    return cmd, 'plugin'
  end
  return cmd, 'PATH'
end

--- initializationOptions for zot lsp.
function M.init_options()
  local o = M.options
  local io = {
    provider = o.provider,
    model = o.model,
    reasoning = o.reasoning,
    apiKey = o.api_key,
    baseUrl = o.base_url,
    permissionMode = o.permission,
    ext = o.ext,
    maxSteps = o.max_steps,
    appendSystemPrompt = o.append_system_prompt,
    resume = o.resume,
    addDirs = o.add_dirs,
    mcpConfig = o.mcp_config,
    noMcp = o.no_mcp,
    piFlags = (o.pi_flags and not vim.tbl_isempty(o.pi_flags)) and o.pi_flags or nil,
  }
  if vim.tbl_isempty(io) then
    return vim.empty_dict()
  end
  return io
end

return M
