-- An extension's dialog closes when zot cancels it ($/cancelRequest: here
-- the run is aborted while permission-gate asks). With Neovim's builtin
-- vim.ui.select the question is zot's own float (answered with a key);
-- a vim.ui.select replacement's float is closed too.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
vim.fn.mkdir(H.ws .. '/gone', 'p')
vim.fn.mkdir(H.ws .. '/kept', 'p')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_GATE') } })

-- The float whose text has `needle`, or nil.
local function dialog_with(needle)
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then
      local b = vim.api.nvim_win_get_buf(w)
      local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
      if text:find(needle, 1, true) then
        return w, text
      end
    end
  end
end

-- 1. The builtin select: zot's float shows the whole question; "2" allows.
vim.cmd('ZotPrompt clean up')
local win, text
H.wait('the question in a float', function()
  win, text = dialog_with('rm -rf gone')
  return win ~= nil
end)
H.ok(text:find('[permission-gate]', 1, true), 'names the extension: ' .. text)
H.ok(
  text:find('1. Deny', 1, true) and text:find('2. Allow once', 1, true),
  'numbered options, the safe one first: ' .. text
)
H.eq(win, vim.api.nvim_get_current_win(), 'the dialog has the focus')
H.keys('2')
local run = H.wait_run()
H.ok(not vim.api.nvim_win_is_valid(win), 'the dialog closed once answered')
H.ok(vim.fn.isdirectory(H.ws .. '/gone') == 0, 'the allowed command ran')
H.ok(H.chat_text():find('removed-it', 1, true), 'its output reached the chat')

if os.getenv('ZOT_TEST_TRANSPORT') == 'builtin' then
  -- Neovim's transport does not tell handlers the request id: a cancelled
  -- dialog cannot be found (|zot-extension-ui| says so).
  H.done()
  return
end

-- 2. Aborting the run while zot's float asks closes it.
vim.cmd('ZotPrompt remove kept')
H.wait('the second question', function()
  win = dialog_with('rm -rf kept')
  return win ~= nil
end)
vim.cmd('ZotAbort')
H.wait('the aborted run to end', function()
  local c = H.chat()
  return c.last_run ~= run and c.last_run.done
end)
run = H.chat().last_run
H.eq('aborted', run.stop, 'stop reason')
H.wait('the cancelled dialog to close', function()
  return not vim.api.nvim_win_is_valid(win)
end)
H.ok(dialog_with('rm -rf kept') == nil, 'no dialog left')

-- 3. A vim.ui.select replacement (a float, as pickers open) that never
-- answers: zot closes its float and leaves insert mode. (A script cannot
-- be in insert mode: :startinsert waits for the main loop. So the mode is
-- what nvim_get_mode says, :startinsert sets it and :stopinsert clears it.)
local insert = false
local real_mode, real_cmd = vim.api.nvim_get_mode, vim.cmd
vim.api.nvim_get_mode = function()
  return insert and { mode = 'i', blocking = false } or real_mode()
end
local function cmd(c, ...)
  if c == 'startinsert' or c == 'stopinsert' then
    insert = c == 'startinsert'
    return
  end
  return real_cmd(c, ...)
end
vim.cmd = type(real_cmd) == 'table'
    and setmetatable({}, {
      __call = function(_, ...)
        return cmd(...)
      end,
      __index = real_cmd,
    })
  or cmd
local answered
vim.ui.select = function(items, opts, on_choice)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, vim.list_extend(vim.split(opts.prompt, '\n', { plain = true }), items))
  vim.api.nvim_open_win(b, true, { relative = 'editor', row = 1, col = 1, width = 60, height = 5 })
  vim.cmd('startinsert')
  answered = on_choice
end
vim.cmd('ZotPrompt remove kept again')
H.wait('the picker', function()
  win = dialog_with('rm -rf kept')
  return win ~= nil
end)
H.eq('i', vim.api.nvim_get_mode().mode, 'the picker is in insert mode')
vim.cmd('ZotAbort')
H.wait('the picker to close', function()
  return not vim.api.nvim_win_is_valid(win)
end)
H.wait('the second aborted run to end', function()
  local c = H.chat()
  return c.last_run ~= run and c.last_run.done
end)
run = H.chat().last_run
H.eq('aborted', run.stop, 'stop reason')
H.ok(vim.api.nvim_get_mode().mode:sub(1, 1) ~= 'i', 'insert mode left')
vim.api.nvim_get_mode, vim.cmd = real_mode, real_cmd
answered('Allow once', 2) -- a late answer is ignored (checked below)

-- The next run works (and no late answer ran the command meanwhile).
vim.cmd('ZotPrompt done?')
local run2 = H.wait_run(run)
H.eq('end_turn', run2.stop, 'the next run')
H.ok(vim.fn.isdirectory(H.ws .. '/kept') == 1, 'still not run')
H.done()
