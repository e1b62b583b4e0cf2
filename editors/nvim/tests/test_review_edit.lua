-- permission "ask": edit the proposal in the review, then :w accepts your
-- version; zot applies what you wrote.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local buf, review = H.review_setup()
vim.cmd('normal! 0cwfarewell')
vim.cmd('write')
local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))
H.eq({ 'farewell world' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'your version was applied')
H.eq('farewell world\n', H.read('hello.txt'), 'saved')
H.done()
