-- zot/notify → vim.notify with the level, once (the client advertises
-- experimental.zot.notify, so no window/showMessage copy); a display
-- command shows in the chat.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_LSPEXT') } })
local got = H.capture_notify()

-- Right away: zot is not started yet and its extensions load after it is;
-- the command waits for them.
vim.cmd('ZotCommand /warn mind the gap')
H.wait('the notification', function()
  for _, n in ipairs(got) do
    if n.msg:find('careful: mind the gap', 1, true) then
      return true
    end
  end
end)
local hits = vim.tbl_filter(function(n)
  return n.msg:find('careful: mind the gap', 1, true) ~= nil
end, got)
H.eq('[lspext] careful: mind the gap', hits[1].msg, 'message')
H.eq(vim.log.levels.WARN, hits[1].level, 'level')

-- An info notification, then a display command (ordered after the first).
vim.cmd('ZotPrompt /disp shown in the chat')
H.wait('the display note', function()
  return H.chat_text():find('> displayed: shown in the chat', 1, true) ~= nil
end)
hits = vim.tbl_filter(function(n)
  return n.msg:find('careful: mind the gap', 1, true) ~= nil
end, got)
H.eq(1, #hits, 'the warning was shown once: ' .. vim.inspect(got))

-- A command's error is shown as an error.
vim.cmd('ZotCommand /oops')
H.wait('the error notification', function()
  for _, n in ipairs(got) do
    if n.msg:find('it went wrong', 1, true) and n.level == vim.log.levels.ERROR then
      return true
    end
  end
end)
H.done()
