-- Your unsaved typing is yours: the user types in a buffer without saving,
-- the model edits the same file and runs bash. bash sees the saved text
-- plus zot's edit; the buffer keeps the user's text plus zot's edit and
-- stays modified; `:checktime` does not reload it or warn, and a later
-- `:w` writes it without "The file has been changed since reading it".
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local saved = {}
for i = 1, 12 do
  saved[#saved + 1] = 'line ' .. i
end
local file = H.write('notes.txt', table.concat(saved, '\n') .. '\n')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
require('zot.client').with_root(H.ws, function() end)
H.wait_ready()
H.wait('the buffer to attach', function()
  return vim.lsp.buf_is_attached(buf, H.state().id)
end)

-- The user's unsaved typing, far from the line zot edits.
vim.api.nvim_buf_set_lines(buf, 0, 0, false, { 'typed by the user, not saved' })
H.ok(vim.bo[buf].modified, 'the typing made the buffer modified')

-- Any "file changed on disk" handling would go through FileChangedShell.
local changed_shell = 0
vim.api.nvim_create_autocmd('FileChangedShell', {
  buffer = buf,
  callback = function()
    changed_shell = changed_shell + 1
  end,
})

vim.cmd('ZotPrompt change line 12 and show the file')
local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))

local zots = vim.list_extend(vim.list_slice(saved, 1, 11), { 'line 12 by zot' })
H.eq(table.concat(zots, '\n') .. '\n', H.read('notes.txt'), "disk: the saved text plus zot's edit")
local mine = vim.list_extend({ 'typed by the user, not saved' }, vim.deepcopy(zots))
H.eq(mine, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "buffer: the user's text plus zot's edit")
H.eq(true, vim.bo[buf].modified, 'the buffer is still modified')

-- bash saw the disk: zot's edit, not the user's line.
local text = H.chat_text()
H.ok(text:find('✓ bash', 1, true), 'bash ran:\n' .. text)
local out = text:match('.*disk%-begin(.-)disk%-end') or ''
H.ok(out:find('line 11', 1, true) and out:find('line 12 by zot', 1, true), "bash saw zot's edit:\n" .. text)
H.ok(not out:find('typed by the user', 1, true), "bash saw the user's unsaved line:\n" .. text)

-- Neovim knows the file as saved with zot's text: no reload, no warning.
vim.cmd('checktime')
H.eq(0, changed_shell, 'FileChangedShell after checktime')
H.eq(mine, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the buffer after checktime')
H.eq(true, vim.bo[buf].modified, 'modified after checktime')

-- One `u` undoes zot's edit (the round trip of the write left no extra
-- step); the redo brings it back.
vim.api.nvim_set_current_buf(buf)
vim.cmd('normal! u')
H.eq(
  vim.list_extend({ 'typed by the user, not saved' }, vim.deepcopy(saved)),
  vim.api.nvim_buf_get_lines(buf, 0, -1, false),
  'after one undo'
)
vim.cmd('execute "normal! \\<C-r>"')
H.eq(mine, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'after redo')

-- A later :w does not ask; were it to, this timer fails the test instead
-- of leaving it waiting for an answer.
local guard = vim.loop.new_timer()
guard:start(
  20000,
  0,
  vim.schedule_wrap(function()
    io.stderr:write(':w is waiting for an answer (The file has been changed since reading it?)\n')
    vim.cmd('cquit 1')
  end)
)
vim.cmd('write')
guard:stop()
guard:close()
H.eq(false, vim.bo[buf].modified, 'saved by the user')
H.eq(table.concat(mine, '\n') .. '\n', H.read('notes.txt'), 'the user saved both')
H.done()
