-- permission "ask": zot/reviewEdit opens a side-by-side diff; `ga` accepts
-- and the edit lands in the buffer.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local buf, review = H.review_setup()
local r = review.active[1]
-- A tab with the current text and the proposal, side by side in diff mode.
local wins = vim.api.nvim_tabpage_list_wins(0)
H.eq(2, #wins, 'review windows')
for _, w in ipairs(wins) do
  H.ok(vim.wo[w].diff, 'diff mode in window ' .. w)
end
H.eq(r.new_buf, vim.api.nvim_get_current_buf(), 'the proposal has the focus')
H.eq({ 'goodbye world' }, vim.api.nvim_buf_get_lines(r.new_buf, 0, -1, false), 'the proposal')
H.eq({ 'hello world' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'nothing applied before the decision')

vim.cmd('normal ga')
H.eq(0, #review.active, 'decided')
H.eq(1, #vim.api.nvim_list_tabpages(), 'the review tab closed')
local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))
H.eq({ 'goodbye world' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the accepted edit')
H.eq('goodbye world\n', H.read('hello.txt'), 'saved')
H.ok(H.chat_text():find('✓ edit hello.txt', 1, true), 'tool line:\n' .. H.chat_text())
H.done()
