-- permission "ask": `gr` in the review rejects; the buffer is untouched and
-- the model is told.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ permission = 'ask' })
local file = H.write('hello.txt', 'hello world\n')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local review = require('zot.review')

vim.cmd('ZotPrompt change the greeting')
H.wait('the review', function()
  return #review.active == 1
end)
vim.cmd('normal gr')
local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))
H.eq({ 'hello world' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the buffer is unchanged')
H.eq(false, vim.bo[buf].modified, 'not modified')
H.eq('hello world\n', H.read('hello.txt'), 'the file is unchanged')
local text = H.chat_text()
H.ok(text:find('✗ edit hello.txt', 1, true), 'failed tool line:\n' .. text)
H.ok(text:find('rejected', 1, true), 'the rejection is in the result:\n' .. text)
H.ok(text:find('Finished.', 1, true), 'the run went on:\n' .. text)
H.done()
