-- :ZotAbort while a review is open: the run ends, the review closes, the
-- buffer stays as it was.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local buf, review = H.review_setup()
vim.cmd('ZotAbort')
local run = H.wait_run()
H.eq('aborted', run.stop, 'stop reason')
H.eq(0, #review.active, 'the review closed')
H.eq(1, #vim.api.nvim_list_tabpages(), 'the review tab closed')
H.eq({ 'hello world' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the buffer is unchanged')
H.done()
