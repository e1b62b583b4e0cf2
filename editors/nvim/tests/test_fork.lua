-- :ZotCheckpoints → "Fork a new session here, with these files": the
-- conversation before the second prompt continues in a new session, the
-- files as they were before it; the chat shows the fork's conversation.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
H.write('a.txt', 'zero\n')
vim.cmd('edit ' .. vim.fn.fnameescape(H.ws .. '/a.txt'))
vim.cmd('ZotPrompt first')
local first = H.wait_run()
vim.cmd('ZotPrompt second')
H.wait_run(first)
H.eq('two\n', H.read('a.txt'), 'after the two prompts')

local listed, sessions
vim.ui.select = function(items, opts, on_choice)
  if opts.prompt == 'zot: resume a session' then
    sessions = {}
    for i, it in ipairs(items) do
      sessions[i] = opts.format_item(it)
    end
    return on_choice(nil, nil)
  end
  if opts.prompt == 'zot: checkpoint' then
    listed = #items
    -- The checkpoint before the second prompt.
    for i, it in ipairs(items) do
      if it.prompt == 'second' then
        return on_choice(it, i)
      end
    end
    error('no checkpoint of the second prompt')
  end
  for i, it in ipairs(items) do
    if opts.format_item(it) == 'Fork a new session here, with these files' then
      return on_choice(it, i)
    end
  end
  error('no fork action')
end
vim.cmd('ZotCheckpoints')
H.wait('the files of the checkpoint', function()
  return H.read('a.txt') == 'one\n'
end)
H.eq(2, listed, 'two checkpoints listed')
H.wait('the fork in the chat', function()
  local text = H.chat_text()
  return text:find('Forked into session', 1, true) and not text:find('ok two', 1, true)
end)
local text = H.chat_text()
H.ok(text:find('ok one', 1, true), 'the first exchange stays:\n' .. text)
H.ok(not text:find('second', 1, true), 'the second prompt is gone:\n' .. text)

-- :ZotSessions shows the branch and where it came from.
vim.cmd('ZotSessions')
H.wait('the session list', function()
  return sessions ~= nil
end)
H.eq(2, #sessions, 'both sessions: ' .. vim.inspect(sessions))
local branches = vim.tbl_filter(function(l)
  return l:find('↳ ', 1, true) ~= nil
end, sessions)
H.eq(1, #branches, 'one of them a branch: ' .. vim.inspect(sessions))
H.done()
