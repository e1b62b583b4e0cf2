-- Helpers of the plain-LSP Neovim tests: Neovim's own LSP client, no zot
-- plugin (run.sh runs each nvim_*.lua in `nvim --headless -u NONE`). Waits
-- are bounded to catch hangs; nothing is asserted about timing.
local H = {}

H.bin = assert(os.getenv('ZOT_BIN'), 'ZOT_BIN')
H.url = assert(os.getenv('ZOT_TEST_URL'), 'ZOT_TEST_URL')
H.ws = assert(os.getenv('ZOT_TEST_WS'), 'ZOT_TEST_WS')
vim.o.swapfile = false
vim.o.hidden = true
vim.cmd('filetype on') -- -u NONE: the filetype a config's filetypes match
vim.cmd('cd ' .. vim.fn.fnameescape(H.ws))

function H.ok(cond, msg)
  if not cond then
    error('assertion failed: ' .. (msg or '?'), 2)
  end
end

function H.eq(want, got, msg)
  if not vim.deep_equal(want, got) then
    error(string.format('%s: want %s, got %s', msg or 'not equal', vim.inspect(want), vim.inspect(got)), 2)
  end
end

function H.wait(what, cond, ms)
  if not vim.wait(ms or 30000, cond, 10) then
    error('timed out waiting for ' .. what, 2)
  end
end

function H.write(path, text)
  local f = assert(io.open(H.ws .. '/' .. path, 'w'))
  f:write(text)
  f:close()
end

function H.read(path)
  local f = assert(io.open(H.ws .. '/' .. path, 'r'))
  local s = f:read('*a')
  f:close()
  return s
end

--- The model requests the scripted LLM got (GET /llmtest/requests).
function H.model_requests()
  local out = vim.fn.system({ 'curl', '-sS', '--max-time', '20', H.url .. '/llmtest/requests' })
  H.ok(vim.v.shell_error == 0, 'GET /llmtest/requests: ' .. out)
  return vim.json.decode(out)
end

-- What zot showed: the default handlers still run, these only record.
H.messages = {}
H.progress = {}
local show = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, result, ctx, config)
  table.insert(H.messages, result.message)
  return show(err, result, ctx, config)
end
local progress = vim.lsp.handlers['$/progress']
vim.lsp.handlers['$/progress'] = function(err, result, ctx, config)
  table.insert(H.progress, { token = result.token, kind = result.value.kind, message = result.value.message })
  return progress(err, result, ctx, config)
end

--- Waits until n runs have ended ($/progress end: zot sends it after
--- everything a run does, the end-of-run saves included).
function H.wait_runs_ended(n)
  H.wait(n .. ' runs to end', function()
    local ends = 0
    for _, p in ipairs(H.progress) do
      if p.kind == 'end' then
        ends = ends + 1
      end
    end
    return ends >= n
  end)
end

function H.message_with(text)
  for _, m in ipairs(H.messages) do
    if m:find(text, 1, true) then
      return m
    end
  end
end

--- Opens file with `zot lsp` started the way the README's configuration
--- does (0.11+: vim.lsp.config + vim.lsp.enable, before the file is
--- opened, as in init.lua; 0.10: vim.lsp.start) and waits until it is
--- attached and initialized.
function H.start(file)
  local cmd = { H.bin, 'lsp', '--api-key', 'test-key', '--base-url', H.url, '--no-session' }
  if vim.lsp.config then
    vim.fn.mkdir(H.ws .. '/.git', 'p') -- the root marker
    vim.lsp.config('zot', { cmd = cmd, filetypes = { 'python' }, root_markers = { '.git' } })
    vim.lsp.enable('zot')
    vim.cmd('edit ' .. vim.fn.fnameescape(file))
  else
    vim.cmd('edit ' .. vim.fn.fnameescape(file))
    H.ok(vim.lsp.start({ name = 'zot', cmd = cmd, root_dir = H.ws }), 'vim.lsp.start gave no client')
  end
  local c
  H.wait('zot lsp to attach', function()
    c = vim.lsp.get_clients({ bufnr = 0, name = 'zot' })[1]
    return c ~= nil and (c.server_capabilities or {}).codeActionProvider ~= nil
  end)
  H.client = c
  return c
end

--- The titles vim.lsp.buf.code_action lists (nothing is applied).
function H.list_actions(opts)
  local seen, done = {}, false
  opts = vim.tbl_extend('force', opts or {}, {
    filter = function(a)
      table.insert(seen, a.title)
      done = true
      return false
    end,
  })
  local notify = vim.notify
  vim.notify = function() end -- "No code actions available": none was picked
  vim.lsp.buf.code_action(opts)
  H.wait('the code action list', function()
    return done
  end)
  -- (The filter sees the whole list in one go: listed means all of it.)
  vim.notify = notify
  return seen
end

--- Runs the one action titled title (vim.lsp.buf.code_action, apply).
function H.run_action(title, opts)
  opts = vim.tbl_extend('force', opts or {}, {
    apply = true,
    filter = function(a)
      return a.title == title
    end,
  })
  vim.lsp.buf.code_action(opts)
end

function H.lines()
  return vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

--- Sends a notification to zot (the client's API changed in 0.11).
function H.notify(method, params)
  local c = H.client
  if vim.fn.has('nvim-0.11') == 1 then
    c:notify(method, params)
  else
    c.notify(method, params)
  end
end

--- Stops the client and waits until zot lsp has exited.
function H.done()
  local id = H.client.id
  vim.lsp.stop_client(id)
  H.wait('zot lsp to exit', function()
    return vim.lsp.get_client_by_id(id) == nil
  end)
  io.stdout:write('\nPASS\n')
  vim.cmd('qa!')
end

return H
