-- Context references in the chat's input, sent as zot/prompt attachments
-- (structured context, docs/protocol.md "Attachments"), never pasted:
--
--   #buffer                 the file of the last window you were in
--   #file:<path>            a file (relative to the workspace, or absolute)
--   #selection              the last visual selection in that window's file
--   #diagnostics            that file's diagnostics (#diagnostics:workspace: all)
--   #mcp:<server>:<uri>     a resource of an MCP server (zot/mcp/resources)
--
-- The text goes as typed, references included (as Copilot Chat sends its
-- #file: variables): the model reads "compare #buffer with
-- #file:src/app.go" next to context blocks labelled with those files.
local compat = require('zot.compat')
local dir_of = require('zot.util').dir_of

local api = vim.api

local M = {}

M.names = { '#buffer', '#file:', '#selection', '#diagnostics', '#diagnostics:workspace', '#mcp:' }

local severity = { 'error', 'warning', 'information', 'hint' }

-- ------------------------------------------------------------ sources --

--- The file buffer #buffer, #selection and #diagnostics mean: the last
--- window that showed a file.
local function source_buf()
  local w = require('zot.chat').last_window()
  if not w then
    return nil, 'no window shows a file (open one, then come back to the chat)'
  end
  return api.nvim_win_get_buf(w)
end

local function buf_uri(buf)
  local path = require('zot.client').buf_path(buf)
  if not path then
    return nil
  end
  return vim.uri_from_fname(path)
end

local function rel(root, path)
  root = root and dir_of(root)
  if root and path:sub(1, #root + 1) == root .. '/' then
    return path:sub(#root + 2)
  end
  return vim.fn.fnamemodify(path, ':~')
end

--- A selection attachment for lines l1..l2 (1-based, inclusive) of buf;
--- charwise = { start_col, end_col } (1-based bytes, end inclusive) when
--- the selection was characterwise.
function M.selection(buf, l1, l2, charwise, root)
  local uri = buf_uri(buf)
  if not uri then
    return nil, 'the selection is not in a file'
  end
  local lines = api.nvim_buf_get_lines(buf, l1 - 1, l2, false)
  if #lines == 0 then
    return nil, 'the selection is empty'
  end
  local start = { line = l1 - 1, character = 0 }
  local finish = { line = l2, character = 0 }
  local text
  if charwise then
    local last = lines[#lines]
    local eb = math.min(charwise[2], #last)
    -- To the end of a multi-byte character.
    while eb < #last and last:byte(eb + 1) >= 0x80 and last:byte(eb + 1) < 0xC0 do
      eb = eb + 1
    end
    lines[#lines] = last:sub(1, eb)
    finish = { line = l2 - 1, character = compat.utf16_index(last, eb) }
    local sb = math.max(1, charwise[1])
    start = { line = l1 - 1, character = compat.utf16_index(lines[1], sb - 1) }
    lines[1] = lines[1]:sub(sb)
    text = table.concat(lines, '\n')
  else
    text = table.concat(lines, '\n') .. '\n'
  end
  local name = rel(root, require('zot.client').buf_path(buf))
  return {
    kind = 'selection',
    uri = uri,
    range = { start = start, ['end'] = finish },
    text = text,
    label = string.format('%s:%d-%d', vim.fn.fnamemodify(name, ':t'), l1, l2),
  }
end

--- The last visual selection of buf ('< and '> marks).
local function visual_selection(buf, root)
  local s = api.nvim_buf_get_mark(buf, '<')
  local e = api.nvim_buf_get_mark(buf, '>')
  if s[1] == 0 or e[1] == 0 then
    return nil, 'nothing was selected in ' .. vim.fn.fnamemodify(api.nvim_buf_get_name(buf), ':t')
  end
  local charwise
  if vim.fn.visualmode() == 'v' then
    charwise = { s[2] + 1, e[2] + 1 }
  end
  return M.selection(buf, s[1], e[1], charwise, root)
end

local function diag_of(d, uri)
  local buf = d.bufnr
  local function pos(lnum, col)
    local line = (buf and api.nvim_buf_is_loaded(buf)) and (api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1] or '')
      or ''
    return { line = lnum, character = compat.utf16_index(line, math.min(col or 0, #line)) }
  end
  local out = {
    uri = uri,
    range = { start = pos(d.lnum, d.col), ['end'] = pos(d.end_lnum or d.lnum, d.end_col or d.col) },
    severity = severity[d.severity] or 'error',
    message = d.message or '',
  }
  if d.source and d.source ~= '' then
    out.source = d.source
  end
  if d.code ~= nil and d.code ~= vim.NIL then
    out.code = tostring(d.code)
  end
  return out
end

local function diagnostics(buf)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local uri = buf_uri(d.bufnr)
    if uri then
      list[#list + 1] = diag_of(d, uri)
    end
  end
  return list
end

-- -------------------------------------------------------------- parse --

local function resolve_file(root, path)
  root = dir_of(root)
  local full = path
  if path:sub(1, 1) == '~' then
    full = vim.fn.expand(path)
  elseif not path:match('^/') then
    full = root .. '/' .. path
  end
  full = compat.normalize(full)
  if vim.fn.filereadable(full) ~= 1 then
    return nil, string.format('#file:%s: no such file in %s', path, root)
  end
  return full
end

--- Turns the references of text into attachments. Returns the text (as
--- it is) and the attachments, or nil and an error in the user's terms. opts.selection: a selection
--- attachment #selection means (:ZotPrompt from visual mode).
function M.expand(root, text, opts)
  opts = opts or {}
  local atts, seen = {}, {}
  local function add(a)
    local key = vim.json.encode({ a.kind, a.uri, a.range, a.server })
    if not seen[key] then
      seen[key] = true
      atts[#atts + 1] = a
    end
  end
  local err
  local function fail(e)
    err = err or e
    return ''
  end
  local function ref(kind, arg)
    if kind == 'buffer' and arg == '' then
      local buf, e = source_buf()
      if not buf then
        return fail('#buffer: ' .. e)
      end
      local uri = buf_uri(buf)
      if not uri then
        return fail('#buffer: the last window does not show a file')
      end
      add({ kind = 'file', uri = uri })
    elseif kind == 'file' then
      if arg == '' then
        return fail('#file: needs a path: #file:src/main.go')
      end
      local full, e = resolve_file(root, arg)
      if not full then
        return fail(e)
      end
      add({ kind = 'file', uri = vim.uri_from_fname(full) })
    elseif kind == 'selection' and arg == '' then
      if opts.selection then
        add(opts.selection)
        return ''
      end
      local buf, e = source_buf()
      local sel
      if buf then
        sel, e = visual_selection(buf, root)
      end
      if not sel then
        return fail('#selection: ' .. e)
      end
      add(sel)
    elseif kind == 'diagnostics' and (arg == '' or arg == 'workspace') then
      if arg == 'workspace' then
        add({ kind = 'problems', diagnostics = diagnostics(nil), label = 'problems (workspace)' })
      else
        local buf, e = source_buf()
        if not buf then
          return fail('#diagnostics: ' .. e)
        end
        local uri = buf_uri(buf)
        if not uri then
          return fail('#diagnostics: the last window does not show a file')
        end
        add({
          kind = 'problems',
          uri = uri,
          diagnostics = diagnostics(buf),
          label = 'problems: ' .. vim.fn.fnamemodify(api.nvim_buf_get_name(buf), ':t'),
        })
      end
    elseif kind == 'mcp' then
      local server, uri = arg:match('^([^:]+):(.+)$')
      if not server then
        return fail('#mcp: write #mcp:<server>:<uri> (complete it with <C-x><C-o>)')
      end
      add({ kind = 'mcpResource', server = server, uri = uri })
    else
      return nil -- not a reference: left as written
    end
    return ''
  end
  -- A reference starts a word: "#file:a.go", not "issue#3". Punctuation
  -- right after one ends it ("explain #selection.", "#file:a.go,").
  for kind, colon, arg in (' ' .. text):gmatch('%s#(%a+)(:?)(%S*)') do
    if colon == '' then
      if arg:match('^[%p]*$') then
        ref(kind, '')
      end
    else
      if kind == 'file' and arg:match('[,;.!?)]+$') and not resolve_file(root, arg) then
        arg = arg:gsub('[,;.!?)]+$', '')
      end
      ref(kind, arg)
    end
  end
  if err then
    return nil, err
  end
  if opts.selection and not seen[vim.json.encode({ 'selection', opts.selection.uri, opts.selection.range })] then
    add(opts.selection)
  end
  return text, atts
end

-- --------------------------------------------------------- completion --

local function workspace_files(root)
  root = dir_of(root)
  local files
  if vim.fn.isdirectory(root .. '/.git') == 1 and vim.fn.executable('git') == 1 then
    files = vim.fn.systemlist({ 'git', '-C', root, 'ls-files', '--cached', '--others', '--exclude-standard' })
    if vim.v.shell_error ~= 0 then
      files = nil
    end
  end
  if not files then
    files = {}
    for _, f in ipairs(vim.fn.globpath(root, '**/*', false, true)) do
      if vim.fn.isdirectory(f) == 0 then
        files[#files + 1] = f:sub(#root + 2)
      end
      if #files >= 5000 then
        break
      end
    end
  end
  return files
end

--- Completion items for base (a "#…" word).
function M.complete(root, base)
  local items = {}
  local file = base:match('^#file:(.*)$')
  if file then
    local lead = file:lower()
    local starts, contains = {}, {}
    for _, f in ipairs(workspace_files(root)) do
      local l = f:lower()
      if l:sub(1, #lead) == lead or vim.fn.fnamemodify(l, ':t'):sub(1, #lead) == lead then
        starts[#starts + 1] = f
      elseif lead ~= '' and l:find(lead, 1, true) then
        contains[#contains + 1] = f
      end
    end
    table.sort(starts)
    table.sort(contains)
    for _, f in ipairs(vim.list_extend(starts, contains)) do
      items[#items + 1] = { word = '#file:' .. f, abbr = f, menu = '[file]' }
      if #items >= 200 then
        break
      end
    end
    return items
  end
  if base:match('^#mcp:') then
    local client = require('zot.client')
    local st = client.get(root)
    local res = st and client.request_sync(st, require('zot.protocol').request.mcp_resources, nil, 3000)
    for _, r in ipairs((res and res.resources) or {}) do
      local word = string.format('#mcp:%s:%s', r.server, r.uri)
      if word:sub(1, #base) == base then
        items[#items + 1] = { word = word, menu = '[' .. tostring(r.name or r.title or 'resource') .. ']' }
      end
    end
    return items
  end
  for _, n in ipairs(M.names) do
    if n:sub(1, #base) == base then
      items[#items + 1] = { word = n, menu = '[zot]' }
    end
  end
  return items
end

--- The input buffer's omnifunc (<C-x><C-o>).
function M.omnifunc(findstart, base)
  local line = api.nvim_get_current_line()
  local col = api.nvim_win_get_cursor(0)[2]
  if findstart == 1 then
    local s = line:sub(1, col):find('#[^%s#]*$')
    if not s then
      return -3
    end
    return s - 1
  end
  local root = vim.b.zot_root or vim.fn.getcwd()
  return M.complete(root, base)
end

--- Typing "#file:" or "#mcp:" in the input opens the completion.
function M.auto_complete(_)
  if vim.fn.pumvisible() == 1 then
    return
  end
  local line = api.nvim_get_current_line()
  local col = api.nvim_win_get_cursor(0)[2]
  local before = line:sub(1, col)
  if before:match('#file:$') or before:match('#mcp:$') then
    -- The menu opens without inserting anything: typing goes on as typed
    -- (completeopt is put back when the completion ends).
    local saved = vim.o.completeopt
    vim.o.completeopt = 'menuone,noinsert,noselect'
    api.nvim_create_autocmd({ 'CompleteDone', 'InsertLeave' }, {
      once = true,
      callback = function()
        vim.o.completeopt = saved
      end,
    })
    api.nvim_feedkeys(api.nvim_replace_termcodes('<C-x><C-o>', true, false, true), 'n', false)
  end
end

return M
