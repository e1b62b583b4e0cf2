-- :ZotPrompt → the streamed text lands in the chat buffer (markdown), with
-- the prompt, a header and usage in the bar.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local file = H.write('notes.txt', 'alpha\nbeta\n')
vim.cmd('edit ' .. vim.fn.fnameescape(file))

vim.cmd('ZotPrompt say hello')
local run = H.wait_run()
H.ok(not run.error, 'the run failed: ' .. tostring(run.error))
local text = H.chat_text()
H.ok(text:find('## You\nsay hello', 1, true), 'the prompt is in the chat:\n' .. text)
H.ok(
  text:find('## zot\nHello there, world.\nSecond line here.', 1, true),
  'the streamed text is in the chat:\n' .. text
)

local chat = H.chat()
H.eq('markdown', vim.bo[chat.buf].filetype, 'chat filetype')
H.ok(chat.deltas == 8, 'all deltas arrived: ' .. chat.deltas)
H.ok(chat.flushes < chat.deltas, 'deltas were coalesced: ' .. chat.flushes .. ' draws for ' .. chat.deltas)
H.ok(
  require('zot.chat').bar_text(chat):find('↑1.2k', 1, true),
  'usage in the bar: ' .. require('zot.chat').bar_text(chat)
)
-- The chat opened in a split next to the file; the file buffer is attached.
local wins = vim.fn.win_findbuf(chat.buf)
H.eq(1, #wins, 'chat windows')
local bar = vim.fn.has('nvim-0.8') == 1 and vim.wo[wins[1]].winbar or vim.wo[wins[1]].statusline
H.ok(bar:find('↑1.2k', 1, true) and bar:find('$', 1, true), 'usage and cost in the winbar/statusline: ' .. bar)
local st = H.state()
H.ok(vim.lsp.buf_is_attached(vim.fn.bufnr(file), st.id), 'the file buffer is attached')
-- The prompt carried the file as context.
H.ok(text:find('%(Editor context: [^\n]-notes%.txt'), 'context sent, naming the file:\n' .. text)

-- A visual (charwise) selection goes as an attachment: file, range and text.
vim.api.nvim_set_current_win(vim.fn.win_findbuf(vim.fn.bufnr(file))[1])
vim.cmd('normal! 2G0lv$h\27')
vim.cmd("'<,'>ZotPrompt explain this")
H.wait_run(run)
text = H.chat_text()
H.ok(text:find('## You\nexplain this\n📎 notes.txt:2-2', 1, true), 'the selection as a chip:\n' .. text)
local sent = H.last_user_text()
H.ok(sent:find('notes.txt, lines 2–2:\n```txt\neta\n```', 1, true), 'the model got the selection:\n' .. sent)
H.ok(text:find('About the selection.', 1, true), 'the answer:\n' .. text)

-- :ZotChat hides and shows the chat, the cursor in its input; `i` in the
-- chat goes to the input in insert mode, <C-s> sends what was typed.
local run2 = H.chat().last_run
vim.cmd('ZotChat')
H.eq(0, #vim.fn.win_findbuf(chat.buf), 'hidden')
local input = require('zot.input').get(H.ws, false)
H.eq(0, #vim.fn.win_findbuf(input.buf), 'the input is hidden with it')
vim.cmd('ZotChat')
H.eq(1, #vim.fn.win_findbuf(chat.buf), 'shown')
H.eq(input.buf, vim.api.nvim_get_current_buf(), 'the input has the focus')
vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.buf)[1])
H.keys('ifrom the chat<C-s>')
H.eq(input.buf, vim.api.nvim_get_current_buf(), '`i` moved to the input')
H.wait_run(run2)
text = H.chat_text()
H.ok(text:find('## You\nfrom the chat', 1, true), 'the prompt typed in the chat:\n' .. text)
H.ok(text:find('Typed in the chat.', 1, true), 'its answer:\n' .. text)
H.eq({ '' }, vim.api.nvim_buf_get_lines(input.buf, 0, -1, false), 'the input is empty after sending')
-- The history: <Up> walks back through the prompts (the :ZotPrompt ones
-- too), <Down> forward, and past the newest the text being written.
local function input_text()
  return table.concat(vim.api.nvim_buf_get_lines(input.buf, 0, -1, false), '\n')
end
vim.api.nvim_buf_set_lines(input.buf, 0, -1, false, { 'half written' })
H.keys('<Esc><Up>')
H.eq('from the chat', input_text(), '<Up>: the newest prompt')
H.keys('<Up>')
H.eq('explain this', input_text(), '<Up>: the one before')
H.keys('<C-p>')
H.eq('say hello', input_text(), '<C-p>: the first')
H.keys('<Down>')
H.eq('explain this', input_text(), '<Down>: forward again')
H.keys('<C-n><Down>')
H.eq('half written', input_text(), 'past the newest: the text being written')
H.done()
