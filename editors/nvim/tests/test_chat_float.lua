-- layout = "float": the chat opens as a float that takes focus (one the
-- cursor is not in could neither be read nor closed with q), its input a
-- float below it.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ chat = { layout = 'float' } })
local file = H.write('notes.txt', 'alpha\n')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local editor = vim.api.nvim_get_current_win()
vim.cmd('ZotPrompt say hello')
H.wait_run()
local chat = H.chat()
local win = vim.api.nvim_get_current_win()
H.ok(win ~= editor, 'the focus moved from the file')
local input = require('zot.input').get(H.ws, false)
H.eq(input.buf, vim.api.nvim_win_get_buf(win), "the chat's input has the focus")
H.ok(vim.api.nvim_win_get_config(win).relative ~= '', 'as a float')
local cwin = vim.fn.win_findbuf(chat.buf)[1]
H.ok(vim.api.nvim_win_get_config(cwin).relative ~= '', 'the chat is a float')
local function bottom(w)
  local pos = vim.api.nvim_win_get_position(w)
  return pos[1] + vim.api.nvim_win_get_height(w)
end
H.ok(vim.api.nvim_win_get_position(win)[1] >= bottom(cwin), 'the input is below the chat')
vim.cmd('normal q')
H.eq(editor, vim.api.nvim_get_current_win(), 'q closed both floats')
H.eq(0, #vim.fn.win_findbuf(chat.buf) + #vim.fn.win_findbuf(input.buf), 'no chat window left')
H.done()
