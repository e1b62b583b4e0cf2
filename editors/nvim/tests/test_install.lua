-- Which zot the plugin runs, and :checkhealth saying where it came from:
-- setup({ cmd }) naming a binary, else vim.g.zot_server_path, else zot
-- built into the plugin's bin/ (the plugin manager's build step), else
-- `zot` on PATH. Each case is a fresh `nvim --headless` loading a copy of
-- the plugin (as a plugin manager installs it), with a PATH of its own.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local plug = H.tmp .. '/plugin-copy'
vim.fn.mkdir(plug, 'p')
for _, d in ipairs({ 'lua', 'plugin', 'doc' }) do
  vim.fn.system({ 'cp', '-R', H.plugin .. '/' .. d, plug .. '/' .. d })
  H.eq(0, vim.v.shell_error, 'copy ' .. d)
end
local pathdir = H.tmp .. '/path-bin'
vim.fn.mkdir(pathdir, 'p')
local sys_path = '/usr/bin:/bin' -- sh, cp: no zot here
H.ok(vim.fn.executable('/usr/bin/zot') == 0 and vim.fn.executable('/bin/zot') == 0, 'no zot in ' .. sys_path)

local function link(dst)
  vim.fn.mkdir(vim.fn.fnamemodify(dst, ':h'), 'p')
  vim.fn.system({ 'ln', '-sf', H.bin, dst })
  H.eq(0, vim.v.shell_error, 'ln ' .. dst)
end

--- Runs lua (which prints with io.stdout:write) in a fresh nvim with the
--- copy on its runtimepath and PATH = path; returns its output.
local function fresh(path, lua)
  local script = H.tmp .. '/case.lua'
  vim.fn.writefile(vim.split(lua, '\n'), script)
  local out = vim.fn.system({
    'env',
    'PATH=' .. path,
    -- run.sh's nvim (a wrapper script for the fetched versions), else this one
    os.getenv('ZOT_TEST_NVIM') or vim.v.progpath,
    '--headless',
    '-u',
    'NONE',
    '-i',
    'NONE',
    '-n',
    '--cmd',
    'set rtp^=' .. plug,
    '-c',
    'runtime plugin/zot.lua',
    '-c',
    'lua local ok, e = pcall(dofile, '
      .. string.format('%q', script)
      .. ') if not ok then io.stdout:write("ERR " .. tostring(e)) end',
    '-c',
    'qa!',
  })
  return out
end

local resolve = [[
%s
local cmd, source = require('zot.config').server()
io.stdout:write(source .. ' ' .. table.concat(cmd, ' '))
]]
local function server(path, pre)
  return vim.trim(fresh(path, string.format(resolve, pre or '')))
end

-- The health report's binary section, from the same fresh nvim.
local health = [[
%s
vim.cmd('checkhealth zot')
io.stdout:write(table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n'))
]]
local function checkhealth(path, pre)
  return fresh(path, string.format(health, pre or ''))
end

-- Nothing anywhere: PATH's `zot`, which is not there, and health says so.
H.eq('PATH zot lsp', server(sys_path), 'nothing installed')
local text = checkhealth(sys_path)
H.ok(text:find('ERROR.-`zot` %(from PATH%) is not executable'), 'health without zot:\n' .. text)
H.ok(text:find('go install github.com/zot%-editors/zot/cmd/zot@latest'), 'health names the install:\n' .. text)

-- zot on PATH.
link(pathdir .. '/zot')
local with_path = pathdir .. ':' .. sys_path
H.eq('PATH zot lsp', server(with_path), 'zot on PATH')
text = checkhealth(with_path)
H.ok(text:find('OK.-binary: ' .. vim.pesc(pathdir .. '/zot') .. ' %(from PATH%)'), 'health, PATH:\n' .. text)
H.ok(text:find('OK.-version: zot v?%d'), 'health shows the version:\n' .. text)

-- Built into the plugin's bin/ (lazy.nvim's build step): wins over PATH;
-- setup's flags are kept.
local built = plug .. '/bin/zot'
link(built)
H.eq('plugin ' .. built .. ' lsp', server(with_path), 'built in the plugin directory')
H.eq(
  'plugin ' .. built .. ' lsp --no-session',
  server(with_path, [[require('zot').setup({ cmd = { 'zot', 'lsp', '--no-session' } })]]),
  'a bare "zot" in setup({ cmd }) is found the same way, with its flags'
)
text = checkhealth(with_path)
H.ok(
  text:find('OK.-binary: ' .. vim.pesc(built) .. " %(from built in the plugin's directory%)"),
  'health, plugin directory:\n' .. text
)

-- vim.g.zot_server_path wins over the built one.
local gpath = H.tmp .. '/g/zot'
link(gpath)
H.eq(
  'g:zot_server_path ' .. gpath .. ' lsp',
  server(with_path, 'vim.g.zot_server_path = ' .. string.format('%q', gpath)),
  'vim.g.zot_server_path'
)

-- setup({ cmd }) naming a binary wins over everything.
local spath = H.tmp .. '/s/zot'
link(spath)
local pre = string.format(
  'vim.g.zot_server_path = %q\nrequire("zot").setup({ cmd = { %q, "lsp", "--no-session" } })',
  gpath,
  spath
)
H.eq('setup ' .. spath .. ' lsp --no-session', server(with_path, pre), 'setup({ cmd })')
text = checkhealth(with_path, pre)
H.ok(text:find('OK.-binary: ' .. vim.pesc(spath) .. ' %(from setup%({ cmd }%)%)'), 'health, setup:\n' .. text)
H.done()
