-- An edit tool → the open buffer changes through workspace/applyEdit, zot/save
-- writes it, and each edit is undone with `u`. A write creates a new file.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local file = H.write('hello.txt', 'hello world\nsecond line\n')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()

vim.cmd('ZotPrompt change the greeting')
local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))

H.eq({ 'goodbye moon', 'second line' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the buffer after the edits')
H.eq('goodbye moon\nsecond line\n', H.read('hello.txt'), 'saved by zot/save')
H.eq(false, vim.bo[buf].modified, 'saved buffer')
H.eq('fresh file\n', H.read('sub/new.txt'), 'the written file')
local nb = vim.fn.bufnr(H.ws .. '/sub/new.txt')
H.ok(nb > 0 and vim.api.nvim_buf_is_loaded(nb), 'the new file is a buffer')
H.eq({ 'fresh file' }, vim.api.nvim_buf_get_lines(nb, 0, -1, false), 'new buffer text')
H.ok(vim.lsp.buf_is_attached(nb, H.state().id), 'the new buffer is attached')

local text = H.chat_text()
H.ok(text:find('✓ edit hello.txt', 1, true), 'tool line in the chat:\n' .. text)
H.ok(text:find('✓ write sub/new.txt', 1, true), 'write tool line in the chat:\n' .. text)
H.ok(text:find('  │ ─ result ─', 1, true), 'result details in the chat:\n' .. text)
H.ok(text:find('Done.', 1, true), 'final text in the chat:\n' .. text)

-- The tool details are folded away in the chat window.
local cwin = vim.fn.win_findbuf(H.chat().buf)[1]
local detail = nil
for i, l in ipairs(vim.api.nvim_buf_get_lines(H.chat().buf, 0, -1, false)) do
  if l:find('^  │') then
    detail = i
    break
  end
end
vim.api.nvim_win_call(cwin, function()
  H.ok(vim.fn.foldclosed(detail) ~= -1, 'details are in a closed fold')
end)

-- Undo, one edit at a time.
vim.api.nvim_set_current_buf(buf)
vim.cmd('normal u')
H.eq({ 'goodbye world', 'second line' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'after one undo')
vim.cmd('normal u')
H.eq({ 'hello world', 'second line' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'after two undos')
H.done()
