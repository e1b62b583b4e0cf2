-- :help zot documents every command, option and key: the help file builds
-- its tags cleanly, every user command and every option has a tag, and the
-- review and panel keys are listed. (Plus the UTF-16 positions helper.)
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local doc = H.tmp .. '/doc'
vim.fn.mkdir(doc, 'p')
vim.fn.writefile(vim.fn.readfile(H.plugin .. '/doc/zot.txt'), doc .. '/zot.txt')
vim.cmd('helptags ' .. vim.fn.fnameescape(doc)) -- errors on duplicate tags
local tags = {}
for _, l in ipairs(vim.fn.readfile(doc .. '/tags')) do
  tags[l:match('^(%S+)')] = true
end

for name, _ in pairs(vim.api.nvim_get_commands({})) do
  if name:match('^Zot') then
    H.ok(tags[':' .. name], 'no help tag for :' .. name)
  end
end
local defaults = require('zot.config').defaults
for k, v in pairs(defaults) do
  if type(v) == 'table' and k ~= 'cmd' and k ~= 'root_markers' then
    for sub in pairs(v) do
      if not (k == 'review' and sub == 'keys') then
        H.ok(tags['zot-option-' .. k .. '.' .. sub], 'no help tag for option ' .. k .. '.' .. sub)
      end
    end
    if k == 'review' then
      H.ok(tags['zot-option-review.keys'], 'review.keys')
    end
  else
    H.ok(tags['zot-option-' .. k], 'no help tag for option ' .. k)
  end
end
for _, k in ipairs(require('zot.config').unset) do
  H.ok(tags['zot-option-' .. k], 'no help tag for option ' .. k)
end
local text = table.concat(vim.fn.readfile(doc .. '/zot.txt'), '\n')
-- Each in its own section (the chat's keys use some of the same letters).
local review_doc = text:match('%*zot%-review%*(.-)%*zot%-panels%*')
local panels_doc = text:match('%*zot%-panels%*(.-)%*zot%-notify%*')
H.ok(review_doc and panels_doc, 'the review and panels sections')
for _, key in pairs(defaults.review.keys) do
  H.ok(review_doc:find('\n    ' .. key .. '%s'), 'review key ' .. key .. ' documented in *zot-review*')
end
for lhs in pairs(require('zot.panel').named_keys) do
  H.ok(panels_doc:find(lhs, 1, true), 'panel key ' .. lhs .. ' documented in *zot-panels*')
end
-- (Positions sent to zot are UTF-16 code units.)
H.eq(1, require('zot.compat').utf16_index('é😀x', 2), 'utf-16 index after é')
H.eq(3, require('zot.compat').utf16_index('é😀x', 6), 'utf-16 index after 😀')
-- The help opens through the runtimepath copy too.
vim.opt.rtp:prepend(H.tmp)
vim.cmd('help :ZotPrompt')
H.eq('help', vim.bo.buftype, ':help :ZotPrompt')
H.done()
