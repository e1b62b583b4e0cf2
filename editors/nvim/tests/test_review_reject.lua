-- permission "ask": `gr` in the side-by-side review rejects; `gR` in the
-- inline (unified diff) review rejects with a note. The buffer stays as it
-- was and the model is told.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local buf, review = H.review_setup(false)
-- The reason prompt: first Esc (nil: back to the review), then words.
local answers = { false, '  keep the greeting ' }
local asked = 0
vim.ui.input = function(_, cb)
  asked = asked + 1
  local a = table.remove(answers, 1)
  cb(a or nil)
end

vim.cmd('ZotPrompt change the greeting')
H.wait('the first review', function()
  return #review.active == 1
end)
local first = review.active[1]
-- The tab line shows the buffer's name: "zot review: hello.txt".
H.eq('zot review: hello.txt', vim.fn.bufname(vim.api.nvim_get_current_buf()), 'the review buffer name')
local bar = vim.fn.has('nvim-0.8') == 1 and vim.wo.winbar or vim.wo.statusline
H.ok(bar:find('hello.txt', 1, true), 'the hint names the file: ' .. bar)
H.ok(
  bar:find('ga', 1, true) and bar:find('gr reject', 1, true) and bar:find('gR', 1, true),
  'the keys are shown: ' .. bar
)
require('zot.config').get().review.layout = 'inline'
vim.cmd('normal gr')
H.wait('the second review', function()
  return #review.active == 1 and review.active[1] ~= first
end)
local diff = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
H.eq('diff', vim.bo.filetype, 'inline review filetype')
H.ok(diff:find('-hello world\n+hello moon', 1, true), 'the unified diff:\n' .. diff)
local second = review.active[1]
vim.cmd('normal gR')
H.eq(1, asked, 'asked why')
H.ok(review.active[1] == second, 'Esc in the reason prompt went back to the review, nothing rejected')
vim.cmd('normal gR')
H.eq(2, asked, 'asked again')

local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))
H.eq({ 'hello world' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the buffer is unchanged')
H.eq(false, vim.bo[buf].modified, 'not modified')
H.eq('hello world\n', H.read('hello.txt'), 'the file is unchanged')
local text = H.chat_text()
H.ok(text:find('✗ edit hello.txt', 1, true), 'failed tool line:\n' .. text)
H.ok(text:find('rejected', 1, true), 'the rejection is in the result:\n' .. text)
H.ok(text:find('The user said: keep the greeting', 1, true), 'the note reached the model, trimmed:\n' .. text)
H.ok(text:find('Finished.', 1, true), 'the run went on:\n' .. text)
H.eq(1, #vim.api.nvim_list_tabpages(), 'the review tabs closed')
H.done()
