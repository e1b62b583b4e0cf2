-- An extension command opens a panel as a float; keys typed there go out as
-- zot/panel/key (q and : too), the extension re-renders; <Esc> and <C-c>
-- make zot close it (zot/panel/close); <C-w> leaves it open.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_TODO') } })
local panel = require('zot.panel')
local compat = require('zot.compat')
local file = H.write('a.txt', 'x\n')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local start_win = vim.api.nvim_get_current_win()

require('zot.client').with(0, function() end)
local st = H.wait_ready()
H.wait_extension('todo')
local sent = H.record_sent(st)

-- Completion knows the extension's command.
H.ok(vim.tbl_contains(require('zot.commands').complete_command('/to', 'ZotCommand /to', 0), '/todos'), 'completion')

vim.cmd('ZotCommand /todos buy milk')
H.wait('the panel', function()
  return panel.find('todos-main') ~= nil
end)
local p = panel.find('todos-main')
local win = vim.api.nvim_get_current_win()
H.eq(p.win, win, 'the panel has the focus')
H.ok(vim.api.nvim_win_get_config(win).relative ~= '', 'the panel is a float')
local function text()
  return table.concat(vim.api.nvim_buf_get_lines(p.buf, 0, -1, false), '\n')
end
H.ok(text():find('› □ buy milk', 1, true), 'the panel lines:\n' .. text())
if compat.has_float_title then
  local title = vim.api.nvim_win_get_config(win).title
  H.ok(vim.inspect(title):find('Todos', 1, true), 'float title: ' .. vim.inspect(title))
else
  H.ok(text():find('^ Todos'), 'title drawn in the float:\n' .. text())
  H.ok(text():find('esc/q close', 1, true), 'footer drawn in the float:\n' .. text())
end

-- A printable key: x toggles the item.
vim.cmd('normal x')
H.wait('the re-render after x', function()
  return text():find('› ✓ buy milk', 1, true) ~= nil
end)
-- A named key: a adds an item, <Up> moves the cursor back up.
vim.cmd('normal a')
H.wait('the new item', function()
  return text():find('› □ new item 2', 1, true) ~= nil
end)
H.keys('<Up>')
H.wait('the cursor to move up', function()
  return text():find('› ✓ buy milk', 1, true) ~= nil
end)
local keys = {}
for _, m in ipairs(sent) do
  if m.method == 'zot/panel/key' then
    keys[#keys + 1] = m.params.key .. (m.params.text and (':' .. m.params.text) or '')
    H.eq('todos-main', m.params.panelId, 'panelId')
  end
end
H.eq({ 'rune:x', 'rune:a', 'up' }, keys, 'the keys sent')
H.ok(p.renders >= 3, 'renders: ' .. tostring(p.renders))

-- <C-w> leaves the panel open; going back to it works.
H.keys('<C-w>p')
H.wait('focus to leave the panel', function()
  return vim.api.nvim_get_current_win() == start_win
end)
H.ok(panel.find('todos-main') ~= nil and vim.api.nvim_win_is_valid(win), 'the panel is still open after <C-w>p')
vim.api.nvim_set_current_win(win)

-- : is a key for the extension, not the command line.
H.keys(':')
H.wait('the : key sent', function()
  for _, m in ipairs(sent) do
    if m.method == 'zot/panel/key' and m.params.text == ':' then
      return true
    end
  end
  return false
end)

local function last_key()
  for i = #sent, 1, -1 do
    if sent[i].method == 'zot/panel/key' then
      return sent[i].params
    end
  end
end

local function closed_sent()
  return #vim.tbl_filter(function(m)
    return m.method == 'zot/panel/closed'
  end, sent)
end

-- <Esc> goes to zot, which closes the panel: the float goes away when
-- zot/panel/close arrives, with no zot/panel/closed (zot closed it).
H.keys('<Esc>')
H.wait('the panel to close on <Esc>', function()
  return panel.find('todos-main') == nil
end)
H.ok(not vim.api.nvim_win_is_valid(win), 'the float closed')
H.eq(start_win, vim.api.nvim_get_current_win(), 'focus is back')
H.eq('esc', last_key().key, 'esc sent')

-- <C-c> does the same.
local function reopen()
  vim.cmd('ZotCommand /todos')
  H.wait('the panel again', function()
    return panel.find('todos-main') ~= nil
  end)
  return panel.find('todos-main')
end
p = reopen()
H.keys('<C-c>')
H.wait('the panel to close on <C-c>', function()
  return panel.find('todos-main') == nil
end)
H.eq('ctrl+c', last_key().key, 'ctrl+c sent')

-- q is the extension's: the todo example closes its panel on q itself.
p = reopen()
H.keys('q')
H.wait("the panel to close on the extension's q", function()
  return panel.find('todos-main') == nil
end)
H.eq('rune', last_key().key, 'q sent as a key')
H.eq('q', last_key().text, 'q sent as a key')
H.eq(0, closed_sent(), 'no zot/panel/closed: zot closed the panels')

-- Closing the float another way tells zot.
p = reopen()
vim.api.nvim_win_close(p.win, true)
H.wait('zot/panel/closed', function()
  return closed_sent() == 1
end)

-- :ZotExtensions lists the extension and its state.
vim.cmd('ZotExtensions')
H.wait('the extensions float', function()
  local b = vim.api.nvim_get_current_buf()
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n'):find('todo%s+1.0.0%s+loaded') ~= nil
end)
vim.cmd('normal q')
H.done()
