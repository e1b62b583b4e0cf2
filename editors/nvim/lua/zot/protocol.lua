-- The zot/* extensions of LSP, declared once: every method of
-- docs/protocol.md by direction and kind, the standard LSP methods the
-- plugin sends or answers, and (as LuaCATS annotations) the params and
-- results, mirroring editors/vscode/src/lsp_ext.ts and server/protocol.go.
-- Every other module names methods only through this table;
-- server/contract_test.go checks that docs, Go, TypeScript and this file
-- agree.

local M = {}

--- The major version of the zot/* contract this client speaks.
M.version = 1

--- The revision of docs/protocol.md this plugin needs at least: a server
--- reporting an older one (experimental.zot.protocol; none before revision
--- 11) is refused with one message (zot.client). Never newer than the
--- server's ProtocolRevision (server/contract_test.go checks).
M.revision = 11

--- Client → server requests.
M.request = {
  prompt = 'zot/prompt',
  abort = 'zot/abort',
  compact = 'zot/compact',
  state = 'zot/state',
  messages = 'zot/messages',
  clear = 'zot/clear',
  models = 'zot/models',
  set_model = 'zot/setModel',
  set_reasoning = 'zot/setReasoning',
  set_permission_mode = 'zot/setPermissionMode',
  ping = 'zot/ping',
  commands = 'zot/commands',
  command = 'zot/command',
  command_complete = 'zot/command/complete',
  skills = 'zot/skills',
  sessions = 'zot/sessions',
  session_resume = 'zot/session/resume',
  session_new = 'zot/session/new',
  session_fork = 'zot/session/fork',
  extensions = 'zot/extensions',
  extensions_reload = 'zot/extensions/reload',
  mcp = 'zot/mcp',
  mcp_restart = 'zot/mcp/restart',
  mcp_resources = 'zot/mcp/resources',
  retry = 'zot/retry',
  resend = 'zot/resend',
  apply_code = 'zot/applyCode',
  checkpoints = 'zot/checkpoints',
  checkpoint_restore = 'zot/checkpoint/restore',
  checkpoint_diff = 'zot/checkpoint/diff',
  user_bash = 'zot/userBash',
}

--- Client → server notifications.
M.notification = {
  panel_key = 'zot/panel/key',
  panel_closed = 'zot/panel/closed',
}

--- Server → client notifications.
M.server_notification = {
  event = 'zot/event',
  notify = 'zot/notify',
  panel_open = 'zot/panel/open',
  panel_render = 'zot/panel/render',
  panel_close = 'zot/panel/close',
  extensions_changed = 'zot/extensions/changed',
  ui_status = 'zot/ui/status',
  ui_widget = 'zot/ui/widget',
  mcp_changed = 'zot/mcp/changed',
  session_changed = 'zot/session/changed',
  input_set = 'zot/input/set',
}

--- Server → client requests.
M.server_request = {
  review_edit = 'zot/reviewEdit',
  save = 'zot/save',
  ui_request = 'zot/ui/request',
  input_get = 'zot/input/get',
}

--- The standard LSP methods the plugin sends (health's probe) or answers.
M.lsp = {
  initialize = 'initialize',
  initialized = 'initialized',
  shutdown = 'shutdown',
  exit = 'exit',
  apply_edit = 'workspace/applyEdit',
  show_message = 'window/showMessage',
  show_message_request = 'window/showMessageRequest',
  log_message = 'window/logMessage',
  progress = '$/progress',
  cancel_request = '$/cancelRequest',
  progress_create = 'window/workDoneProgress/create',
}

--- JSON-RPC error codes of zot (docs/protocol.md, "Errors").
M.error_code = {
  no_runtime = -32001,
  server_not_initialized = -32002,
  request_cancelled = -32800,
  request_failed = -32803,
}

-- ---------------------------------------------------------------- shared

---@class zot.Position
---@field line integer
---@field character integer

---@class zot.Range
---@field start zot.Position
---@field end zot.Position

---@class zot.Usage
---@field input integer
---@field output integer
---@field cache_read integer
---@field cache_write integer
---@field cost_usd number

---@class zot.ServerInfo
---@field protocolVersion integer
---@field protocol? integer
---@field version string
---@field provider string
---@field model string
---@field reasoning? 'off'|'low'|'medium'|'high'
---@field cwd string
---@field permissionMode 'auto'|'ask'|'readonly'
---@field commands zot.CommandInfo[]
---@field error? string

---@class zot.CommandInfo
---@field name string
---@field description string
---@field source 'builtin'|'extension'|'mcp'|string
---@field extension? string

-- ---------------------------------------------------------------- runs

---@class zot.ImageParam
---@field mimeType string
---@field data string

---@class zot.PromptContext
---@field uri string
---@field range? zot.Range
---@field selectionText? string

---@class zot.PromptParams
---@field text string
---@field images? zot.ImageParam[]
---@field context? zot.PromptContext
---@field attachments? zot.Attachment[]

---@class zot.Attachment
---@field kind 'file'|'selection'|'problems'|'terminal'|'mcpResource'
---@field uri? string
---@field range? zot.Range
---@field text? string
---@field server? string
---@field label? string
---@field diagnostics? zot.AttachedDiagnostic[]

---@class zot.AttachedDiagnostic
---@field uri string
---@field range zot.Range
---@field severity 'error'|'warning'|'information'|'hint'
---@field message string
---@field source? string
---@field code? string

---@class zot.ResendParams
---@field messageIndex integer
---@field text string
---@field images? zot.ImageParam[]
---@field context? zot.PromptContext
---@field attachments? zot.Attachment[]

---@class zot.ApplyCodeParams
---@field uri string
---@field text string
---@field range? zot.Range

---@class zot.ApplyCodeResult
---@field applied boolean
---@field message? string

--- Checkpoints: the workspace recorded before every prompt.
---@class zot.CheckpointInfo
---@field id string
---@field messageIndex integer
---@field prompt string
---@field kind 'prompt'|'restore'
---@field time string
---@field filesChanged integer

---@class zot.CheckpointsResult
---@field checkpoints zot.CheckpointInfo[]

---@class zot.CheckpointRestoreParams
---@field checkpoint string
---@field mode 'code'|'conversation'|'both'

---@class zot.CheckpointFileChange
---@field path string
---@field uri string
---@field action 'restored'|'removed'|'recreated'

---@class zot.CheckpointRestoreResult
---@field checkpoint string
---@field mode string
---@field undo string
---@field files zot.CheckpointFileChange[]
---@field messageCount integer
---@field messagesRemoved integer

---@class zot.CheckpointDiffParams
---@field checkpoint string

---@class zot.CheckpointFileDiff
---@field path string
---@field uri string
---@field status 'added'|'deleted'|'modified'
---@field diff string

---@class zot.CheckpointDiffResult
---@field checkpoint string
---@field files zot.CheckpointFileDiff[]

---@class zot.SessionForkParams
---@field messageIndex integer
---@field withFiles? boolean

---@class zot.SessionForkResult
---@field sessionId string
---@field forkedFrom string
---@field messageCount integer
---@field files zot.CheckpointFileChange[]
---@field undo? string

--- zot/session/changed: an extension moved the conversation (its fork or
--- navigate_tree action); the chat draws it again.
---@class zot.SessionChangedParams
---@field sessionId string
---@field messageCount integer
---@field reason string
---@field editorText? string

--- The answer to zot/prompt, zot/compact and prompt commands.
---@class zot.RunStarted
---@field runId string
---@field queued boolean
---@field ahead? integer

--- The user's own shell command (`!cmd`; `!!cmd` keeps it out of the
--- conversation).
---@class zot.UserBashParams
---@field command string
---@field excludeFromContext? boolean

---@class zot.AbortParams
---@field clearQueue? boolean

---@class zot.AbortResult
---@field aborted string|nil
---@field dropped string[]

---@class zot.StateResult
---@field provider string
---@field model string
---@field reasoning 'off'|'low'|'medium'|'high'
---@field cwd string
---@field message_count integer
---@field busy boolean
---@field usage zot.Usage
---@field session_id? string
---@field forked_from? string
---@field permissionMode 'auto'|'ask'|'readonly'
---@field runId? string
---@field queued integer

---@class zot.MessagesResult
---@field messages table[]

---@class zot.ClearResult
---@field cleared boolean

---@class zot.ModelsResult
---@field models table[]
---@field current string

---@class zot.SetModelParams
---@field model string

---@class zot.SetModelResult
---@field model string

---@class zot.SetReasoningParams
---@field reasoning 'off'|'low'|'medium'|'high'

---@class zot.SetReasoningResult
---@field reasoning 'off'|'low'|'medium'|'high'

---@class zot.SetPermissionModeParams
---@field mode 'auto'|'ask'|'readonly'

---@class zot.SetPermissionModeResult
---@field mode 'auto'|'ask'|'readonly'

---@class zot.PingResult
---@field pong boolean

-- ---------------------------------------------------------------- commands

---@class zot.CommandsResult
---@field commands zot.CommandInfo[]

--- A SKILL.md: /skill:<name> [args] sends its body as the prompt.
---@class zot.SkillInfo
---@field name string
---@field description string
---@field allowedTools? string[]
---@field permissions? any
---@field body string
---@field path string
---@field source string

---@class zot.SkillsResult
---@field skills zot.SkillInfo[]

---@class zot.CommandParams
---@field name string
---@field args? string

-- Completion of a command's argument (args: what is typed after the name).
---@class zot.CommandCompleteParams
---@field name string
---@field args string

---@class zot.CommandCompleteResult
---@field completions zot.CommandCompletion[]

---@class zot.CommandCompletion
---@field value string
---@field description? string

--- What the editor should do after a slash command.
---@class zot.CommandResult
---@field action 'prompt'|'insert'|'display'|'open_panel'|'noop'
---@field prompt? string
---@field insert? string
---@field display? string
---@field panelId? string
---@field runId? string
---@field queued? boolean
---@field error? string

-- ---------------------------------------------------------------- sessions

---@class zot.SessionInfo
---@field id string
---@field path string
---@field cwd string
---@field created string
---@field modified string
---@field title string
---@field messages integer
---@field parent? string

---@class zot.SessionsResult
---@field sessions zot.SessionInfo[]
---@field current string

---@class zot.ResumeParams
---@field id string

---@class zot.SessionResult
---@field sessionId string
---@field messageCount integer
---@field forkedFrom? string
---@field message? string

-- ---------------------------------------------------------------- extensions

---@class zot.ExtensionStatus
---@field name string
---@field version? string
---@field source string
---@field dir string
---@field state string
---@field reason? string
---@field pid? integer
---@field commands string[]
---@field tools string[]
---@field shortcuts? zot.Shortcut[]

---A pi extension's registerShortcut: bound with <Plug>(zot-shortcut-KEY).
---@class zot.Shortcut
---@field key string
---@field command string
---@field description? string

---@class zot.ExtensionsResult
---@field extensions zot.ExtensionStatus[]
---@field commands zot.CommandInfo[]
---@field loading? boolean
---@field error? string

-- ---------------------------------------------------------------- MCP servers

---@class zot.MCPServerStatus
---@field name string
---@field scope string
---@field file? string
---@field transport string
---@field command string
---@field state string
---@field tools string[]
---@field lastError? string
---@field restarts? integer
---@field pid? integer
---@field log? string

---@class zot.MCPResult
---@field servers zot.MCPServerStatus[]
---@field errors? string[]
---@field disabled? boolean

---@class zot.MCPRestartParams
---@field name string

---@class zot.MCPResource
---@field server string
---@field uri string
---@field name string
---@field title? string
---@field description? string
---@field mimeType? string

---@class zot.MCPResourcesResult
---@field resources zot.MCPResource[]

-- ---------------------------------------------------------------- panels

---@class zot.Panel
---@field panelId string
---@field extension string
---@field title string
---@field lines string[]
---@field footer string

---@class zot.PanelCloseParams
---@field panelId string
---@field extension? string

---@class zot.PanelKeyParams
---@field panelId string
---@field key string
---@field text? string

-- ---------------------------------------------------------------- server → client

---@class zot.NotifyParams
---@field extension string
---@field level 'info'|'success'|'warn'|'error'|string
---@field message string

---@class zot.ReviewEditParams
---@field uri string
---@field oldText string
---@field newText string
---@field toolCallId string
---@field tool? string

---@class zot.ReviewEditResult
---@field decision 'accept'|'reject'
---@field text? string
---@field message? string

---@class zot.SaveParams
---@field uris string[]
---@field rebased? zot.RebasedDoc[]

---@class zot.RebasedDoc
---@field uri string
---@field text string

---@class zot.SaveFailed
---@field uri string
---@field reason string

---@class zot.SaveResult
---@field saved string[]
---@field written? string[]
---@field failed? zot.SaveFailed[]

---@class zot.UIRequestParams
---@field extension string
---@field kind 'confirm'|'select'|'input'|'editor'
---@field title? string
---@field message? string
---@field options? string[]
---@field placeholder? string
---@field default? string

---@class zot.UIRequestResult
---@field value? boolean|string
---@field cancelled? boolean

---@class zot.UIStatusParams
---@field extension string
---@field key string
---@field text string|nil

---@class zot.UIWidgetParams
---@field extension string
---@field key string
---@field lines string[]|nil

---@class zot.InputSetParams
---@field extension string
---@field text string
---@field mode 'replace'|'paste'

---@class zot.InputGetParams
---@field extension string

---@class zot.InputGetResult
---@field text string

return M
