-- A run that failed offers Retry on the error itself: the error line says
-- which key retries, and that key sends the same prompt again.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
vim.cmd('ZotPrompt say hello')
local run = H.wait_run()
H.ok(run.error or run.stop == 'error', 'the run failed: ' .. vim.inspect(run.stop))
local text = H.chat_text()
H.ok(text:find('**error:** ', 1, true), 'the error in the chat:\n' .. text)
H.ok(text:find('_(gr in the chat: retry)_', 1, true), 'Retry offered on the error:\n' .. text)

local cwin = vim.fn.win_findbuf(H.chat().buf)[1]
vim.api.nvim_set_current_win(cwin)
H.keys('gr')
run = H.wait_run(run)
H.ok(not run.error, 'the retry failed: ' .. tostring(run.error))
text = H.chat_text()
H.ok(text:find('Recovered.', 1, true), 'the new answer:\n' .. text)
H.ok(not text:find('**error:**', 1, true), 'the error left with the failed run:\n' .. text)
local _, prompts = text:gsub('## You\nsay hello', '')
H.eq(1, prompts, 'the prompt once:\n' .. text)
H.done()
