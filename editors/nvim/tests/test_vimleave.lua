-- Quitting Neovim (VimLeavePre) stops zot and its extensions: the runner
-- checks that the pids noted here are gone once nvim has exited.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_TODO') } })
local compat = require('zot.compat')

require('zot.client').with_root(H.ws, function() end)
local st = H.wait_ready()
local ext = H.wait_extension('todo')
H.ok(st.pid and compat.alive(st.pid), 'zot runs: ' .. tostring(st.pid))
H.ok(ext.pid and compat.alive(ext.pid), 'the extension runs: ' .. tostring(ext.pid))
H.expect_gone(st.pid, 'zot')
H.expect_gone(ext.pid, 'todo-extension')
-- zot is nvim's child; the extension is zot's.
H.ok(vim.tbl_contains(compat.children(), st.pid), 'zot is a child of nvim')
H.eq(st.pid, vim.api.nvim_get_proc(ext.pid).ppid, "the extension's parent")
H.done() -- :qall! → VimLeavePre
