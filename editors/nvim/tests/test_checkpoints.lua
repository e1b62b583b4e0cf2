-- :ZotCheckpoints: a run edits an open buffer and bash creates a file;
-- the picker lists the checkpoint taken before the prompt, Compare opens
-- the checkpoint's text beside the buffer in diff mode, and Restore both
-- puts the buffer and the disk back, removes the created file and takes
-- the prompt out of the chat.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local file = H.write('hello.txt', 'hello world\nsecond line\n')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()

vim.cmd('ZotPrompt change the greeting')
local run = H.wait_run()
H.ok(not run.error, 'run error: ' .. tostring(run.error))
H.eq({ 'goodbye world', 'second line' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the buffer after the run')
H.eq('made\n', H.read('made.txt'), 'bash made a file')
H.ok(H.chat_text():find('change the greeting', 1, true), 'the prompt is in the chat')

-- The picker: the checkpoint, then the action (scripted answers).
local shown, action = nil, nil
vim.ui.select = function(items, opts, on_choice)
  if opts.prompt == 'zot: checkpoint' then
    shown = {}
    for i, it in ipairs(items) do
      shown[i] = opts.format_item(it)
    end
    return on_choice(items[1], 1)
  end
  for i, it in ipairs(items) do
    if opts.format_item(it) == action then
      return on_choice(it, i)
    end
  end
  error('no action ' .. action)
end

action = 'Compare with now'
local tabs = #vim.api.nvim_list_tabpages()
vim.cmd('ZotCheckpoints')
H.wait('the compare tabs', function()
  return #vim.api.nvim_list_tabpages() == tabs + 2
end)
H.eq(1, #shown, 'one checkpoint listed')
H.ok(
  shown[1]:find('before "change the greeting"', 1, true) and shown[1]:find('(2 file(s) differ)', 1, true),
  'listed as: ' .. shown[1]
)
-- Find the tab of hello.txt: the checkpoint's text beside the buffer.
local found = false
for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
  local wins = vim.api.nvim_tabpage_list_wins(tab)
  if #wins == 2 then
    local lb, rb = vim.api.nvim_win_get_buf(wins[1]), vim.api.nvim_win_get_buf(wins[2])
    if rb == buf then
      found = true
      H.eq({ 'hello world', 'second line' }, vim.api.nvim_buf_get_lines(lb, 0, -1, false), 'the checkpoint side')
      H.ok(
        vim.api.nvim_buf_get_name(lb):find('zot://checkpoint/', 1, true),
        'the scratch buffer is named for the checkpoint'
      )
      H.ok(vim.wo[wins[1]].diff and vim.wo[wins[2]].diff, 'both windows in diff mode')
    end
  end
end
H.ok(found, 'a tab compares hello.txt with its checkpoint')
vim.cmd('tabonly')
vim.api.nvim_set_current_buf(buf)

action = 'Restore both'
vim.cmd('ZotCheckpoints')
H.wait('the buffer restored', function()
  return vim.deep_equal({ 'hello world', 'second line' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
end)
H.wait('made.txt removed', function()
  return H.read('made.txt') == nil
end)
H.eq('hello world\nsecond line\n', H.read('hello.txt'), 'the disk restored')
H.wait('the chat redrawn without the prompt', function()
  return not H.chat_text():find('change the greeting', 1, true)
end)
H.done()
