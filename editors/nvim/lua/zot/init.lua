-- zot for Neovim: require("zot").setup({...}); see :help zot.
local P = require('zot.protocol')
local compat = require('zot.compat')
local config = require('zot.config')
local util = require('zot.util')

local M = {}

local did_setup = false

--- Configures zot. Every option is optional; see :help zot-options.
function M.setup(opts)
  config.set(opts)
  did_setup = true
  require('zot.client').setup_autocmds()
  return M
end

function M.ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

local function client()
  M.ensure_setup()
  return require('zot.client')
end

local function chat()
  return require('zot.chat')
end

local function fail(state, what, err)
  local msg = (err and (err.message or tostring(err))) or 'failed'
  util.err(what .. ': ' .. msg)
  if state then
    chat().note(state.root, what .. ': ' .. msg, 'error')
  end
end

--- The root to act on: opts.root, else the current buffer's.
local function with_state(opts, f)
  opts = opts or {}
  local c = client()
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  if opts.root then
    return c.with_root(opts.root, f)
  end
  return c.with(bufnr, f)
end
M.with_state = with_state

-- -------------------------------------------------------------- context --

local function continuation(b)
  return b and b >= 0x80 and b < 0xC0
end

--- PromptContext for a buffer (and a 1-based inclusive line range).
function M.context(bufnr, range)
  local c = client()
  if not c.buf_path(bufnr) then
    return nil
  end
  local ctx = { uri = vim.uri_from_bufnr(bufnr) }
  if not range then
    return ctx
  end
  local l1, l2 = range[1], range[2]
  local lines = vim.api.nvim_buf_get_lines(bufnr, l1 - 1, l2, false)
  if #lines == 0 then
    return ctx
  end
  local start = { line = l1 - 1, character = 0 }
  local finish = { line = l2, character = 0 }
  local s, e = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if bufnr == vim.api.nvim_get_current_buf() and vim.fn.visualmode() == 'v' and s[2] == l1 and e[2] == l2 then
    local last = lines[#lines]
    local eb = math.min(e[3], #last)
    while eb < #last and continuation(last:byte(eb + 1)) do
      eb = eb + 1
    end
    lines[#lines] = last:sub(1, eb)
    finish = { line = l2 - 1, character = compat.utf16_index(last, eb) }
    local sb = math.max(1, s[3])
    local first = vim.api.nvim_buf_get_lines(bufnr, l1 - 1, l1, false)[1] or ''
    start = { line = l1 - 1, character = compat.utf16_index(first, sb - 1) }
    lines[1] = lines[1]:sub(sb)
    ctx.selectionText = table.concat(lines, '\n')
  else
    ctx.selectionText = table.concat(lines, '\n') .. '\n'
  end
  ctx.range = { start = start, ['end'] = finish }
  return ctx
end

-- -------------------------------------------------------------- prompts --

local function show_chat(state, force)
  if force or config.get().chat.open_on_prompt then
    chat().open(state.root, false)
  end
end

---@param res zot.CommandResult
local function on_command_result(state, res)
  res = res or {}
  local err = util.val(res.error)
  if err and err ~= '' then
    util.notify('zot: ' .. err, vim.log.levels.ERROR)
    chat().note(state.root, err, 'error')
  end
  local action = res.action
  if action == 'prompt' or (res.runId and res.runId ~= '') then
    chat().on_started(state, res)
    show_chat(state)
  elseif action == 'insert' then
    vim.ui.input({ prompt = 'zot> ', default = res.insert or '' }, function(text)
      if text and vim.trim(text) ~= '' then
        M.prompt(text, { root = state.root })
      end
    end)
  elseif action == 'display' then
    chat().note(state.root, res.display or '')
    show_chat(state, true)
  end
  M.last_command_result = res
end

--- Runs a slash command ("/name args" or name, args).
function M.command(name, args, opts)
  name = vim.trim(name or '')
  if args == nil then
    local n, a = name:match('^(%S+)%s*(.*)$')
    name, args = n or name, a or ''
  end
  name = name:gsub('^/', '')
  if name == '' then
    util.err('usage: :ZotCommand /name [args]')
    return
  end
  if name == 'skills' and vim.trim(args or '') == '' then
    return M.skills(opts)
  end
  -- skill:<name> is zot's own too: it never waits for the extensions.
  local builtin = vim.tbl_contains(require('zot.commands').builtin, name) or name:match('^skill:') ~= nil
  with_state(opts, function(state)
    local function send()
      require('zot.client').request(state, P.request.command, { name = name, args = args or '' }, function(err, res)
        if err then
          return fail(state, '/' .. name, err)
        end
        on_command_result(state, res)
      end)
    end
    if builtin then
      send()
    else
      -- An extension's command: zot knows it once its extensions started.
      require('zot.client').when_extensions_ready(state, send)
    end
  end)
end

--- A skill's body flattened to one line, for the picker.
function M.skill_preview(body, max)
  max = max or 80
  local parts = {}
  for _, l in ipairs(vim.split(body or '', '\n', { plain = true })) do
    l = vim.trim((l:gsub('^#+%s*', '')))
    if l ~= '' then
      parts[#parts + 1] = l
    end
  end
  local flat = table.concat(parts, ' · ')
  if vim.fn.strchars(flat) > max then
    flat = vim.fn.strcharpart(flat, 0, max - 1) .. '…'
  end
  return flat
end

--- /skills: pick a skill (name, description, the start of its body) and
--- run it as /skill:<name> args (its body is sent as the prompt).
function M.skills(opts)
  with_state(opts, function(state)
    require('zot.client').request(state, P.request.skills, nil, function(err, res)
      if err then
        return fail(state, 'skills', err)
      end
      local list = (res and res.skills) or {}
      if #list == 0 then
        util.notify(
          'zot: no skills. Put one in .zot/skills/<name>/SKILL.md (or .claude/skills, .agents/skills, $ZOT_HOME/skills)'
        )
        return
      end
      vim.ui.select(list, {
        prompt = 'zot: run a skill',
        format_item = function(s)
          return string.format(
            '%s — %s  │ %s',
            tostring(s.name),
            tostring(s.description or ''),
            M.skill_preview(s.body)
          )
        end,
      }, function(choice)
        if not choice then
          return
        end
        vim.ui.input({ prompt = '/skill:' .. choice.name .. ' args (optional): ' }, function(args)
          if args == nil then
            return
          end
          M.command('skill:' .. choice.name, args, opts)
        end)
      end)
    end)
  end)
end

--- The selection attachment of a :ZotPrompt range of bufnr: charwise when
--- it is the last visual selection and that was characterwise.
local function range_selection(bufnr, range, root)
  local l1, l2 = range[1], range[2]
  local charwise
  local s, e = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if bufnr == vim.api.nvim_get_current_buf() and vim.fn.visualmode() == 'v' and s[2] == l1 and e[2] == l2 then
    charwise = { s[3], e[3] }
  end
  return require('zot.refs').selection(bufnr, l1, l2, charwise, root)
end

--- Sends text (a prompt or a /command) for root. opts: context (the
--- PromptContext), selection (the attachment #selection means), resend
--- (the messageIndex of the message it replaces). The #references in the
--- text become attachments. done(ok) tells whether zot took it.
function M.send(root, text, opts, done)
  opts = opts or {}
  done = done or function() end
  if text:match('^%s*/%S') and not opts.resend then
    M.command(vim.trim(text), nil, { root = root })
    return done(true)
  end
  -- `!cmd` runs the user's own shell command (its output joins the
  -- conversation), `!!cmd` the same kept out of it, as in pi.
  local bang, command = text:match('^%s*(!!?)%s*(.-)%s*$')
  if bang and command ~= '' and not opts.resend then
    client().with_root(root, function(state)
      local params = { command = command, excludeFromContext = bang == '!!' or nil }
      local ok = require('zot.client').request(state, P.request.user_bash, params, function(err, res)
        if err then
          fail(state, 'shell command', err)
          return done(false)
        end
        chat().on_started(state, res)
        done(true)
      end)
      if ok then
        show_chat(state)
      end
    end, opts.bufnr)
    return
  end
  local body, atts = require('zot.refs').expand(root, text, { selection = opts.selection })
  if not body then
    util.err(atts)
    return done(false)
  end
  if body == '' and #atts == 0 then
    return done(false)
  end
  client().with_root(root, function(state)
    local params = { text = body, context = opts.context }
    if #atts > 0 then
      params.attachments = atts
    end
    local method = P.request.prompt
    local cut -- what the resend took from the view
    if opts.resend then
      method = P.request.resend
      params.messageIndex = opts.resend
      -- The message and what follows leave the view now (the new run's
      -- events may come before the answer); back if zot refuses.
      cut = chat().truncate_at(state.root, opts.resend)
    end
    local ok = require('zot.client').request(state, method, params, function(err, res)
      if err then
        chat().untruncate(state.root, cut)
        fail(state, opts.resend and 'edit and resend' or 'prompt', err)
        return done(false)
      end
      chat().on_started(state, res)
      done(true)
    end)
    if ok then
      show_chat(state)
    end
  end, opts.bufnr)
end

--- Sends a prompt. opts: range = {line1, line2} (the selection goes as an
--- attachment), bufnr, root. "/name args" runs a command. No text: the
--- chat's input takes the cursor (with the range's selection attached).
function M.prompt(text, opts)
  opts = opts or {}
  text = text or ''
  M.ensure_setup()
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local root = opts.root or client().root_for(bufnr)
  require('zot.chat').remember_window()
  local sel
  if opts.range then
    local e
    sel, e = range_selection(bufnr, opts.range, root)
    if not sel then
      return util.err(':ZotPrompt: ' .. tostring(e))
    end
  end
  if vim.trim(text) == '' then
    local inp = require('zot.input')
    if sel then
      inp.attach(root, sel)
    end
    return inp.focus(root, true)
  end
  if text:match('^%s*/%S') then
    return M.command(vim.trim(text), nil, opts)
  end
  pcall(require('zot.store').add_history, root, text)
  local ctx
  if not sel and config.get().send_file_context and not opts.root then
    ctx = M.context(bufnr, nil)
  end
  M.send(root, text, { context = ctx, selection = sel, bufnr = bufnr })
end

--- Opens the chat with the cursor in its input, in insert mode (:ZotPrompt
--- without words).
function M.prompt_input(opts)
  opts = opts or {}
  M.ensure_setup()
  local root = opts.root or client().root_for(vim.api.nvim_get_current_buf())
  require('zot.input').focus(root, true)
end

function M.abort(opts)
  opts = opts or {}
  local c = client()
  local st = opts.root and c.get(opts.root) or c.current()
  if not st then
    util.notify('zot: nothing is running', vim.log.levels.INFO)
    return
  end
  c.request(st, P.request.abort, { clearQueue = opts.clear_queue or false }, function(err, res)
    if err then
      return fail(st, 'abort', err)
    end
    res = res or {}
    if not util.val(res.aborted) and #(res.dropped or {}) == 0 then
      util.notify('zot: nothing to abort', vim.log.levels.INFO)
    end
  end)
end

-- ----------------------------------------------------------------- chat --

--- Starts the client of root if it does not run (the last conversation
--- comes back then: see restore_last).
local function ensure_client(root)
  pcall(function()
    client().with_root(root, function() end)
  end)
end

function M.toggle_chat(opts)
  opts = opts or {}
  M.ensure_setup()
  local root = opts.root or client().root_for(vim.api.nvim_get_current_buf())
  chat().toggle(root)
  if chat().is_open(root) then
    ensure_client(root)
  end
end

function M.open_chat(opts)
  opts = opts or {}
  M.ensure_setup()
  local root = opts.root or client().root_for(vim.api.nvim_get_current_buf())
  local win = chat().open(root, opts.focus ~= false)
  ensure_client(root)
  return win
end

--- :ZotChatNew: another chat of this workspace, with a zot of its own: its
--- own session, run, queue, permission mode and model, so a run in one
--- never waits for another. Commands typed in its chat or input go to it;
--- a file's commands go to the workspace's first chat. Returns its key.
function M.new_chat(opts)
  opts = opts or {}
  M.ensure_setup()
  local dir = util.dir_of(opts.root or client().root_for(vim.api.nvim_get_current_buf()))
  local n = 2
  while client().by_root[dir .. '#zot-chat-' .. n] or chat().chats[dir .. '#zot-chat-' .. n] do
    n = n + 1
  end
  local key = dir .. '#zot-chat-' .. n
  M.open_chat({ root = key, focus = opts.focus })
  return key
end

--- :ZotChatClose: closes a chat made by :ZotChatNew — its zot stops, its
--- session stays for :ZotSessions. The workspace's first chat is only
--- hidden (as :ZotChat does).
function M.close_chat(opts)
  opts = opts or {}
  local key = opts.root or client().root_for(vim.api.nvim_get_current_buf())
  chat().close(key)
  require('zot.input').close(key)
  if not util.is_extra_chat(key) then
    return
  end
  client().stop(client().by_root[key])
  local c = chat().get(key, false)
  local inp = require('zot.input').get(key, false)
  for _, b in ipairs({ c and c.buf, inp and inp.buf }) do
    if b and vim.api.nvim_buf_is_valid(b) then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  chat().get(key, false) -- forgets it (and its timer)
  require('zot.input').get(key, false)
end

-- ------------------------------------------------------------- sessions --

function M.new_session(opts)
  with_state(opts, function(state)
    require('zot.client').request(state, P.request.session_new, nil, function(err, res)
      if err then
        return fail(state, 'new session', err)
      end
      require('zot.store').update(state.root, { session = false })
      chat().clear(state.root)
      chat().note(state.root, 'New session' .. ((res and res.sessionId) and (' ' .. res.sessionId) or '') .. '.')
    end)
  end)
end

--- Draws the current session's conversation (zot/messages) in the chat,
--- its token count in the bar, then the note; cb() after.
local function show_transcript(state, note, cb)
  local c = require('zot.client')
  c.request(state, P.request.messages, nil, function(e2, msgs)
    if not e2 and msgs then
      local ok, e = pcall(chat().render_messages, state.root, msgs.messages)
      if not ok then
        util.err('drawing the conversation: ' .. tostring(e))
      end
    end
    c.request(state, P.request.state, nil, function(e3, st)
      if not e3 and st then
        chat().set_usage(state.root, util.val(st.usage))
      end
      if note then
        chat().note(state.root, note)
      end
      chat().scroll_to_end(state.root)
      if cb then
        cb()
      end
    end)
  end)
end

--- zot/session/changed: an extension forked the conversation or moved it
--- in the session tree. The chat draws the conversation it is in now; a
--- navigation back to a prompt puts that prompt in the input, as pi does.
---@param params zot.SessionChangedParams
function M.session_changed(state, params)
  local what = params.reason == 'fork' and 'forked the conversation into a new session'
    or params.reason == 'new' and 'started a new session'
    or params.reason == 'resume' and 'resumed a stored session'
    or 'moved the conversation in the session tree'
  local note = ('An extension %s (session %s, %d messages).'):format(
    what,
    tostring(params.sessionId),
    params.messageCount or 0
  )
  show_transcript(state, note, function()
    local text = util.val(params.editorText)
    if text and text ~= '' then
      require('zot.input').append(state.root, text)
    end
  end)
end

local function resume_note(res, what)
  if util.val(res.message) and res.message ~= '' then
    return res.message
  end
  return string.format('%s session %s (%s messages).', what, tostring(res.sessionId), tostring(res.messageCount))
end

local function resume(state, id)
  local c = require('zot.client')
  c.request(state, P.request.session_resume, { id = id }, function(err, res)
    if err then
      return fail(state, 'resume', err)
    end
    require('zot.store').update(state.root, { session = res.sessionId })
    show_transcript(state, resume_note(res, 'Resumed'), function()
      show_chat(state, true)
    end)
  end)
end

--- A new zot for a root whose last conversation is remembered (zot.store)
--- resumes it and draws it, before anything else is sent: reopening the
--- chat, or Neovim, gives the conversation back rather than an empty
--- session (as VS Code does after a reload). done() always follows.
function M.restore_last(state, done)
  local o = config.get()
  local last = require('zot.store').get(state.root).session
  if not o.chat.restore or o.resume or state.resumed_after_crash or type(last) ~= 'string' or last == '' then
    return done()
  end
  local c = require('zot.client')
  c.request(state, P.request.state, nil, function(err, st)
    if err or not st or st.session_id == last or (tonumber(st.message_count) or 0) > 0 then
      return done()
    end
    c.request(state, P.request.session_resume, { id = last }, function(e2, res)
      if e2 or not res then
        require('zot.store').update(state.root, { session = false })
        chat().note(
          state.root,
          string.format(
            'The last conversation (session %s) could not be restored: %s',
            last,
            tostring(e2 and e2.message or 'no answer')
          )
        )
        return done()
      end
      show_transcript(state, resume_note(res, 'Restored the last conversation:'), done)
    end)
  end)
end

function M.sessions(opts)
  with_state(opts, function(state)
    require('zot.client').request(state, P.request.sessions, nil, function(err, res)
      if err then
        return fail(state, 'sessions', err)
      end
      -- A session nobody wrote in is not history.
      local list = vim.tbl_filter(function(s)
        return (tonumber(s.messages) or 0) > 0
      end, (res and res.sessions) or {})
      if #list == 0 then
        util.notify('zot: no saved sessions for this workspace')
        return
      end
      vim.ui.select(list, {
        prompt = 'zot: resume a session',
        format_item = function(s)
          local mark = s.id == res.current and '* ' or '  '
          -- A branch (zot/session/fork) names the session it came from.
          local branch = util.val(s.parent) and ('  ↳ ' .. tostring(s.parent):sub(1, 8)) or ''
          return string.format(
            '%s%s  %s  %d messages  %s%s',
            mark,
            tostring(s.id),
            tostring(s.modified or ''):sub(1, 16),
            tonumber(s.messages) or 0,
            tostring(s.title or ''),
            branch
          )
        end,
      }, function(choice)
        if choice then
          resume(state, choice.id)
        end
      end)
    end)
  end)
end

function M.set_model(id, opts)
  with_state(opts, function(state)
    require('zot.client').request(state, P.request.set_model, { model = id }, function(err, res)
      if err then
        return fail(state, 'model', err)
      end
      local model = (res and res.model) or id
      if state.info then
        state.info.model = model
      end
      chat().set_model(state.root, model)
      util.notify('zot: model ' .. model)
    end)
  end)
end

function M.models(opts)
  with_state(opts, function(state)
    require('zot.client').request(state, P.request.models, nil, function(err, res)
      if err then
        return fail(state, 'models', err)
      end
      local list = (res and res.models) or {}
      vim.ui.select(list, {
        prompt = 'zot: model',
        format_item = function(m)
          return (m.id == res.current and '* ' or '  ') .. tostring(m.id) .. '  (' .. tostring(m.provider) .. ')'
        end,
      }, function(choice)
        if choice then
          M.set_model(choice.id, { root = state.root })
        end
      end)
    end)
  end)
end

function M.set_mode(mode, opts)
  local function set(state, m)
    require('zot.client').request(state, P.request.set_permission_mode, { mode = m }, function(err, res)
      if err then
        return fail(state, 'mode', err)
      end
      if state.info then
        state.info.permissionMode = res and res.mode or m
      end
      util.notify('zot: permission mode ' .. tostring(res and res.mode or m))
    end)
  end
  with_state(opts, function(state)
    if mode and mode ~= '' then
      return set(state, mode)
    end
    vim.ui.select({ 'auto', 'ask', 'readonly' }, { prompt = 'zot: permission mode' }, function(m)
      if m then
        set(state, m)
      end
    end)
  end)
end

-- ----------------------------------------------------------- extensions --

local function extension_lines(res)
  local lines = {}
  local exts = (res and res.extensions) or {}
  if res and res.loading then
    lines[#lines + 1] = '(the extensions are still starting)'
  end
  if res and util.val(res.error) then
    lines[#lines + 1] = 'error: ' .. tostring(res.error)
  end
  if #exts == 0 then
    lines[#lines + 1] = 'no extensions'
  end
  for _, e in ipairs(exts) do
    local l = string.format(
      '%-16s %-8s %-10s %s',
      tostring(e.name),
      tostring(e.version or ''),
      tostring(e.state),
      tostring(e.source or '')
    )
    if util.val(e.reason) and e.reason ~= '' then
      l = l .. '  — ' .. tostring(e.reason)
    end
    lines[#lines + 1] = l
    local cmds = util.val(e.commands) or {}
    local tools = util.val(e.tools) or {}
    if #cmds > 0 then
      lines[#lines + 1] = '    commands: /' .. table.concat(cmds, ' /')
    end
    if #tools > 0 then
      lines[#lines + 1] = '    tools: ' .. table.concat(tools, ' ')
    end
    for _, sc in ipairs(util.val(e.shortcuts) or {}) do
      lines[#lines + 1] = '    shortcut: '
        .. tostring(sc.key)
        .. ' (<Plug>(zot-shortcut-'
        .. tostring(sc.key)
        .. '), :ZotShortcut '
        .. tostring(sc.key)
        .. ')'
    end
  end
  return lines
end
M.extension_lines = extension_lines

function M.extensions(opts)
  with_state(opts, function(state)
    require('zot.client').request(state, P.request.extensions, nil, function(err, res)
      if err then
        return fail(state, 'extensions', err)
      end
      require('zot.client').extensions_changed(state, res or {})
      require('zot.panel').show('zot extensions', extension_lines(res), 'q close · :ZotReload reloads')
    end)
  end)
end

-- ---------------------------------------------------- extension shortcuts --

--- A key as pi or a mapping spells it (ctrl+shift+y, Shift-Ctrl-Y),
--- compared without case, separator or modifier order.
function M.normalize_key(k)
  local parts = vim.split((tostring(k):lower():gsub('%s+', '')), '[+-]')
  local key = table.remove(parts)
  parts = vim.tbl_filter(function(p)
    return p ~= ''
  end, parts)
  table.sort(parts)
  parts[#parts + 1] = key
  return table.concat(parts, '+')
end

--- The shortcuts pi extensions registered (registerShortcut), each with
--- its extension's name, from a zot/extensions result.
function M.shortcut_list(res)
  local out = {}
  for _, e in ipairs((res and util.val(res.extensions)) or {}) do
    for _, s in ipairs(util.val(e.shortcuts) or {}) do
      out[#out + 1] = { key = s.key, command = s.command, description = util.val(s.description), extension = e.name }
    end
  end
  return out
end

local plugs = {} -- <Plug> names this plugin defined for shortcuts

--- Defines <Plug>(zot-shortcut-KEY) (normal mode) for each shortcut, so a
--- user maps a key of their choice to it; the key pi names is never
--- bound by zot itself.
function M.define_shortcut_plugs(res)
  for _, s in ipairs(M.shortcut_list(res)) do
    local lhs = '<Plug>(zot-shortcut-' .. s.key .. ')'
    if not plugs[lhs] then
      plugs[lhs] = true
      local key = s.key
      vim.keymap.set('n', lhs, function()
        M.shortcut(key)
      end, { desc = 'zot: the extension shortcut ' .. key })
    end
  end
end

--- Runs a pi extension's shortcut: key (any spelling) or its command
--- (shortcut:KEY); without one, pick it with vim.ui.select().
function M.shortcut(key, opts)
  with_state(opts, function(state)
    require('zot.client').when_extensions_ready(state, function()
      require('zot.client').request(state, P.request.extensions, nil, function(err, res)
        if err then
          return fail(state, 'shortcut', err)
        end
        require('zot.client').extensions_changed(state, res or {})
        local all = M.shortcut_list(res)
        local function run(s)
          M.command(s.command, '', opts)
        end
        if key and key ~= '' then
          for _, s in ipairs(all) do
            if s.command == key or M.normalize_key(s.key) == M.normalize_key(key) then
              return run(s)
            end
          end
          local known = {}
          for _, s in ipairs(all) do
            known[#known + 1] = s.key .. ' (' .. tostring(s.extension) .. ')'
          end
          return util.err(
            'no extension shortcut '
              .. key
              .. (
                #known > 0 and (' (registered: ' .. table.concat(known, ', ') .. ')')
                or ' (no extension registered one)'
              )
          )
        end
        if #all == 0 then
          return util.notify('zot: no extension registered a shortcut (pi extensions do with registerShortcut)')
        end
        vim.ui.select(all, {
          prompt = 'zot: run an extension shortcut',
          format_item = function(s)
            return s.key .. '  ' .. tostring(s.extension) .. (s.description and ('  — ' .. s.description) or '')
          end,
        }, function(s)
          if s then
            run(s)
          end
        end)
      end)
    end)
  end)
end

function M.reload(opts)
  with_state(opts, function(state)
    require('zot.client').request(state, P.request.extensions_reload, nil, function(err, res)
      if err then
        return fail(state, 'reload', err)
      end
      require('zot.client').extensions_changed(state, res or {})
      local loaded, total = 0, 0
      for _, e in ipairs((res and res.extensions) or {}) do
        total = total + 1
        if e.state == 'loaded' then
          loaded = loaded + 1
        end
      end
      util.notify(string.format('zot: reloaded extensions: %d loaded of %d', loaded, total))
    end)
  end)
end

-- ---------------------------------------------------------- MCP servers --

local function mcp_lines(res)
  local lines = {}
  if res and util.val(res.disabled) then
    return { 'MCP servers are off (--no-mcp or noMcp)' }
  end
  for _, e in ipairs((res and util.val(res.errors)) or {}) do
    lines[#lines + 1] = 'error: ' .. tostring(e)
  end
  local servers = (res and util.val(res.servers)) or {}
  if #servers == 0 then
    lines[#lines + 1] = 'no MCP servers configured ($ZOT_HOME/mcp.json, .mcp.json, .zot/mcp.json)'
  end
  for _, s in ipairs(servers) do
    local tools = util.val(s.tools) or {}
    lines[#lines + 1] = string.format(
      '%-16s %-8s %-6s %-11s %d tools',
      tostring(s.name),
      tostring(s.scope),
      tostring(s.transport),
      tostring(s.state),
      #tools
    )
    lines[#lines + 1] = '    ' .. tostring(s.command)
    local last = util.val(s.lastError)
    if last and last ~= '' then
      lines[#lines + 1] = '    last error: ' .. last
    end
    if #tools > 0 then
      lines[#lines + 1] = '    tools: ' .. table.concat(tools, ' ')
    end
  end
  return lines
end
M.mcp_lines = mcp_lines

--- :ZotMcp lists the MCP servers; :ZotMcp restart NAME restarts one.
function M.mcp(opts)
  opts = opts or {}
  local args = vim.split(vim.trim(opts.args or ''), '%s+', { trimempty = true })
  with_state(opts, function(state)
    if args[1] == 'restart' then
      if not args[2] then
        return util.notify('zot: :ZotMcp restart NAME (:ZotMcp lists them)', vim.log.levels.WARN)
      end
      return require('zot.client').request(state, P.request.mcp_restart, { name = args[2] }, function(err, res)
        if err then
          return fail(state, 'MCP restart', err)
        end
        for _, s in ipairs((res and res.servers) or {}) do
          if s.name == args[2] then
            util.notify(string.format('zot: MCP server %s: %s', s.name, s.state))
          end
        end
      end)
    end
    require('zot.client').request(state, P.request.mcp, nil, function(err, res)
      if err then
        return fail(state, 'MCP servers', err)
      end
      require('zot.panel').show('zot MCP servers', mcp_lines(res), 'q close · :ZotMcp restart NAME')
    end)
  end)
end

-- --------------------------------------------------------------- status --

--- What the plugin knows about the current root (for statuslines, tests).
function M.status(opts)
  opts = opts or {}
  local c = client()
  local root = opts.root or c.root_for(vim.api.nvim_get_current_buf())
  local st = c.get(root)
  local ch = chat().get(root, false)
  return {
    root = root,
    running = st ~= nil,
    ready = st and st.ready or false,
    client_id = st and st.id,
    pid = st and st.pid,
    info = st and st.info,
    status = ch and ch.status or 'idle',
    usage = ch and ch.usage,
    last_run = ch and ch.last_run,
    chat_buf = ch and ch.buf,
  }
end

--- A statusline component: "zot: <state>" while a client runs, then the
--- extensions' status items (zot/ui/status), e.g. "zot: idle plan".
function M.statusline()
  local ok, s = pcall(M.status)
  if not ok or not s.running then
    return ''
  end
  local line = 'zot: ' .. s.status
  local st = client().get(s.root)
  for _, text in ipairs(require('zot.extui').status_texts(st)) do
    line = line .. ' ' .. text
  end
  return line
end

--- The extensions' widget lines (zot/ui/widget) of the current root, in
--- (extension, key) order: what the chat shows at its bottom, for a
--- statusline, a winbar or a float of your own.
function M.widget_lines(opts)
  opts = opts or {}
  local c = client()
  local root = opts.root or c.root_for(vim.api.nvim_get_current_buf())
  return require('zot.extui').widget_lines(c.get(root))
end

return M
