-- The version handshake against the real zot: one reporting an older
-- protocol revision (ZOT_TEST_PROTOCOL_REVISION) is refused with ONE
-- message naming its version and revision, the revision the plugin needs
-- and what to update; nothing is asked of it and it is stopped. The same
-- zot reporting its true revision then answers a prompt.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local P = require('zot.protocol')
local client = require('zot.client')
H.setup({ cmd_env = { ZOT_TEST_PROTOCOL_REVISION = tostring(P.revision - 1) } })
local notes = H.capture_notify()

vim.cmd('ZotPrompt say hello')
H.wait('the mismatch message', function()
  return #notes > 0
end)
local version = vim.trim(vim.fn.system({ H.bin, 'version' })):match('^zot (%S+)')
H.eq(vim.log.levels.ERROR, notes[1].level, 'an error')
H.eq(
  string.format(
    'zot: zot %s (%s) implements protocol revision %d; this plugin needs revision %d or newer. '
      .. 'Update the zot that setup({ cmd }) names.',
    version,
    H.bin,
    P.revision - 1,
    P.revision
  ),
  notes[1].msg,
  'the message'
)
H.wait('the old zot to stop', function()
  return #client.all() == 0
end)

-- :checkhealth zot reports the mismatch as an error (its probe starts
-- the old zot).
vim.cmd('checkhealth zot')
local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
vim.cmd('bwipeout!')
H.ok(
  health:find(
    'ERROR.-implements protocol revision ' .. (P.revision - 1) .. '; this plugin needs revision ' .. P.revision
  ),
  'health:\n' .. health
)

-- The same zot with its own revision: the prompt is answered, and the
-- refused start left nothing behind but its one message.
require('zot.config').get().cmd_env = nil
vim.cmd('ZotPrompt say hello')
local run = H.wait_run()
H.ok(not run.error, 'the run failed: ' .. tostring(run.error))
H.ok(H.chat_text():find('## zot\nok', 1, true), 'the answer:\n' .. H.chat_text())
H.eq(1, #notes, 'one message in all: ' .. vim.inspect(notes))

-- A zot from before the handshake (no experimental.zot.protocol), from
-- each source: the fix names that source.
local handshake = require('zot.handshake')
local old = { protocolVersion = 1, version = '0.1.0' }
H.ok(
  handshake.check(old, '/p/bin/zot', 'plugin'):find('an older protocol revision than 11; .*:Lazy build zot'),
  handshake.check(old, '/p/bin/zot', 'plugin')
)
H.ok(handshake.check(old, 'zot', 'PATH'):find('Update zot on your PATH', 1, true), 'PATH')
H.ok(handshake.check(old, 'z', 'g:zot_server_path'):find('vim.g.zot_server_path', 1, true), 'g:')
H.ok(
  handshake.check({ protocolVersion = P.version + 1, protocol = 1, version = '9.0.0' }, 'zot', 'PATH'):find(
    'speaks protocol version ' .. (P.version + 1) .. '; this plugin speaks ' .. P.version .. '. Update the zot plugin.',
    1,
    true
  ),
  'a newer major version: update the plugin'
)
H.eq(
  nil,
  handshake.check({ protocolVersion = P.version, protocol = P.revision + 3 }, 'zot', 'PATH'),
  'newer revisions are fine'
)
H.ok(handshake.check(vim.empty_dict(), 'zot', 'PATH'):find("not zot's language server", 1, true), 'not zot')
H.done()
