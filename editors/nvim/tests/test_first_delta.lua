-- The first text_delta of an answer is in the chat buffer as soon as its
-- event is handled, not after a flush timer: chat.flush_ms is ten minutes
-- here, so only the immediate draw can put it there. The rest of the
-- answer is still all drawn (by the answer's end), per answer.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ chat = { flush_ms = 600000 } })
local chat_mod = require('zot.chat')

-- Each answer's first delta, and the chat's text right after its event.
local seen = {}
local on_event = chat_mod.on_event
chat_mod.on_event = function(state, ev)
  local c = chat_mod.get(state.root, false)
  local first = ev.type == 'text_delta' and c and not c.writing
  on_event(state, ev)
  if first then
    seen[#seen + 1] = { delta = ev.delta, text = H.chat_text(), flushes = H.chat().flushes }
  end
end

vim.cmd('ZotPrompt say something')
local run = H.wait_run()
H.ok(not run.error, 'the run failed: ' .. tostring(run.error))
vim.cmd('ZotPrompt and again')
H.wait_run(run)

H.eq(2, #seen, 'first deltas seen (one per answer)')
H.eq('First', seen[1].delta, "the first answer's first delta")
H.ok(seen[1].text:find('## zot\nFirst$'), 'the first delta is drawn at once:\n' .. seen[1].text)
H.eq('Again', seen[2].delta, "the second answer's first delta")
H.ok(seen[2].text:find('## zot\nAgain$'), "the second answer's first delta is drawn at once:\n" .. seen[2].text)
local text = H.chat_text()
H.ok(text:find('## zot\nFirst token then more text.\nAnd a second line.', 1, true), 'the whole first answer:\n' .. text)
H.ok(text:find('## zot\nAgain first then the rest.', 1, true), 'the whole second answer:\n' .. text)
H.done()
