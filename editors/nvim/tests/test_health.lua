-- :checkhealth zot reports the binary, its version, the provider state and
-- the extensions: first through a short-lived probe, then from the running
-- client.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup({ args = { '--ext', os.getenv('ZOT_TEST_LSPEXT') } })

local function health()
  vim.cmd('checkhealth zot')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  return text
end

local function expect(text, pat, what)
  H.ok(text:find(pat), what .. ' (' .. pat .. ') in:\n' .. text)
end

local text = health()
expect(text, 'OK.-binary: ' .. vim.pesc(H.bin) .. ' %(from setup%({ cmd }%)%)', 'the binary and where it came from')
expect(text, 'OK.-version: zot v?%d', 'version') -- a release (0.2.0) or a build from a checkout (v0.0.0-…)
expect(text, 'short%-lived', 'probe')
expect(text, 'OK.-protocol version 1, revision %d+ %(this plugin needs %d+%)', 'protocol')
expect(text, 'OK.-provider anthropic, model', 'provider')
expect(text, 'OK.-lspext 1%.0%.0 %(ext%): loaded', 'extension')
expect(text, 'OK.-base URL ' .. vim.pesc(H.url) .. ' answers %(HTTP %d+%)', 'the base URL, checked')
H.ok(not text:find('ERROR'), 'no errors:\n' .. text)
H.eq(0, #require('zot.client').all(), 'the probe left no client')

require('zot.client').with_root(H.ws, function() end)
H.wait_ready()
H.wait_extension('lspext')
text = health()
expect(text, 'OK.-running for', 'running client')
expect(text, 'OK.-lspext 1%.0%.0 %(ext%): loaded', 'extension')

-- An address nothing listens on is an error, named.
local health_mod = require('zot.health')
local dead = 'http://127.0.0.1:1'
local ok, seen = health_mod.reach(dead, 2000)
H.eq(false, ok, 'nothing listens on ' .. dead .. ': ' .. tostring(seen))
require('zot.config').get().base_url = dead
text = health()
expect(text, 'ERROR.-base URL ' .. vim.pesc(dead) .. ' does not answer', 'the dead base URL')
H.done()
