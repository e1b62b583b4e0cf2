-- Thinking: `reasoning` reaches zot as initializationOptions.reasoning; the
-- streamed thinking_delta text lands under a "💭 Thinking" line in a closed
-- fold, apart from the answer; zot/messages after a resume shows it again.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ reasoning = 'high' })
H.write('notes.txt', 'alpha\n')

vim.cmd('ZotPrompt what is in notes.txt?')
local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))

local st = H.state()
local client = require('zot.client')
H.eq('high', client.request_sync(st, 'zot/state').reasoning, 'zot/state reasoning (initializationOptions.reasoning)')

local chat = H.chat()
local lines = vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)
local text = table.concat(lines, '\n')
H.ok(
  text:find('💭 Thinking\n  │ First line of thought.\n  │ Second line: check notes.txt.\n', 1, true),
  'first thinking block:\n' .. text
)
H.ok(text:find('💭 Thinking\n  │ It holds alpha.\n', 1, true), 'second thinking block:\n' .. text)
H.ok(text:find('The file says alpha.', 1, true), 'the answer:\n' .. text)
H.ok(not text:find('Thinking…', 1, true), 'the ellipsis goes when the thinking ends:\n' .. text)
H.ok(
  not text:find('alpha.It holds', 1, true) and not text:find('thought.The', 1, true),
  'thinking kept apart from the answer:\n' .. text
)

-- Each thinking body is in a closed fold; the answer is not.
local cwin = vim.fn.win_findbuf(chat.buf)[1]
local function row_of(s)
  for i, l in ipairs(lines) do
    if l == s then
      return i
    end
  end
end
local first, answer = row_of('  │ First line of thought.'), nil
for i, l in ipairs(lines) do
  if l:find('The file says alpha.', 1, true) then
    answer = i
  end
end
vim.api.nvim_win_call(cwin, function()
  H.ok(vim.fn.foldclosed(first) ~= -1, 'thinking is in a closed fold')
  H.eq(first + 1, vim.fn.foldclosedend(first), 'the fold holds exactly the thinking lines')
  H.eq(-1, vim.fn.foldclosed(first - 1), 'the 💭 line stays visible')
  H.eq(-1, vim.fn.foldclosed(row_of('  │ It holds alpha.') - 1), 'the second 💭 line stays visible')
  H.ok(vim.fn.foldclosed(row_of('  │ It holds alpha.')) ~= -1, 'a one-line thinking is folded too')
  H.eq(-1, vim.fn.foldclosed(answer), 'the answer is not folded')
end)

-- History (zot/messages, as after a resume) shows the thinking folded too.
local msgs = client.request_sync(st, 'zot/messages').messages
require('zot.chat').clear(st.root) -- what follows is the history's drawing
H.ok(not H.chat_text():find('It holds alpha.', 1, true), 'cleared:\n' .. H.chat_text())
require('zot.chat').render_messages(st.root, msgs)
lines = vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)
text = table.concat(lines, '\n')
H.ok(text:find('💭 Thinking\n  │ It holds alpha.', 1, true), 'history thinking:\n' .. text)
vim.api.nvim_win_call(cwin, function()
  H.ok(vim.fn.foldclosed(row_of('  │ It holds alpha.')) ~= -1, 'history thinking is folded')
end)
-- Opened while it streams, the fold stays open as lines arrive.
require('zot.chat').clear(st.root)
vim.cmd('ZotPrompt think slowly')
local function find_row(s)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)) do
    if l == s then
      return i
    end
  end
end
H.wait('the first thinking line', function()
  return find_row('  │ l1') ~= nil
end)
vim.api.nvim_win_call(cwin, function()
  vim.cmd(find_row('  │ l1') .. 'foldopen')
end)
local run3 = H.wait_run(run)
H.ok(not run3.error, 'run error: ' .. tostring(run3.error))
vim.api.nvim_win_call(cwin, function()
  local r1, r6 = find_row('  │ l1'), find_row('  │ l6')
  H.ok(r1 and r6 and r6 == r1 + 5, 'all thinking lines: ' .. H.chat_text())
  H.ok(vim.fn.foldlevel(r6) > 0, 'the last line is in the fold')
  H.eq(-1, vim.fn.foldclosed(r6), 'the fold the user opened stayed open')
end)
H.ok(H.chat_text():find('Slow answer.', 1, true), 'the slow answer')
H.done()
