-- File names in the chat open the file: <CR> (or gf) on notes.txt:2 opens
-- it at line 2 in the window the user came from; a name that is not a
-- file opens nothing.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local notes = H.write('notes.txt', 'one\ntwo\nthree\n')
local app = H.write('src/app.go', 'package app\n')
vim.cmd('edit ' .. vim.fn.fnameescape(app))

vim.cmd('ZotPrompt which files?')
local run = H.wait_run()
H.ok(not run.error, 'the run failed: ' .. tostring(run.error))
local chat = H.chat()
local win = vim.fn.win_findbuf(chat.buf)[1]

--- Puts the cursor on the first occurrence of word in the chat and presses keys.
local function press_on(word, keys)
  vim.api.nvim_set_current_win(win)
  local lines = vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)
  for i, l in ipairs(lines) do
    local c = l:find(word, 1, true)
    if c then
      vim.api.nvim_win_set_cursor(win, { i, c })
      vim.cmd('normal ' .. vim.api.nvim_replace_termcodes(keys, true, false, true))
      return
    end
  end
  error('not in the chat: ' .. word .. '\n' .. table.concat(lines, '\n'))
end

press_on('notes.txt:2', '<CR>')
H.eq(vim.fn.resolve(notes), vim.fn.resolve(vim.api.nvim_buf_get_name(0)), '<CR> opened the file')
H.eq(2, vim.api.nvim_win_get_cursor(0)[1], 'at its line')
H.ok(vim.api.nvim_get_current_win() ~= win, 'not in the chat window')

press_on('src/app.go', 'gf')
H.eq(vim.fn.resolve(app), vim.fn.resolve(vim.api.nvim_buf_get_name(0)), 'gf on `src/app.go` opened it')

local nbufs = #vim.api.nvim_list_bufs()
press_on('missing.txt', '<CR>')
H.eq(win, vim.api.nvim_get_current_win(), 'a name that is not a file opens nothing')
H.eq(chat.buf, vim.api.nvim_win_get_buf(win), 'the chat window still shows the chat')
press_on('example.org', 'gf')
H.eq(win, vim.api.nvim_get_current_win(), 'a web address is not a file')
H.eq(chat.buf, vim.api.nvim_win_get_buf(win), 'the chat window still shows the chat')
H.eq(nbufs, #vim.api.nvim_list_bufs(), 'no buffer was made for either')
H.done()
