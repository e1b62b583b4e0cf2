-- :ZotCommand completion before zot runs: it starts zot (for the current
-- root) and completes the extensions' commands too, not only the built-ins.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_TODO') } })
H.ok(H.state() == nil, 'nothing runs yet')
local got = require('zot.commands').complete_command('/to', 'ZotCommand /to', 14)
H.eq({ '/todos' }, got, "the todo extension's command completes before start")
H.ok(H.state() ~= nil, 'zot was started for it')
H.eq(
  { '/mode', '/model' },
  require('zot.commands').complete_command('/mo', 'ZotCommand /mo', 14),
  'built-ins still complete'
)
H.done()
