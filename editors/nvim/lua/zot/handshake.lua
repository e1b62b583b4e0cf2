-- The version handshake (docs/protocol.md, "initialize"): whether this
-- plugin can use the zot that answered, and if not, the one message that
-- says so — zot's version and protocol revision, the revision the plugin
-- needs, and what to update — instead of MethodNotFound errors later.
local P = require('zot.protocol')

local M = {}

--- What to update when zot is too old, by where the binary came from
--- (zot.config.server's source).
function M.fix(source)
  if source == 'plugin' then
    return "Rebuild it with the plugin: :Lazy build zot (or, in the plugin's repository, go build -o editors/nvim/bin/zot ./cmd/zot)."
  elseif source == 'PATH' then
    return 'Update zot on your PATH (go install github.com/zot-editors/zot/cmd/zot@latest), '
      .. 'or build it with the plugin (:help zot-install).'
  elseif source == 'g:zot_server_path' then
    return 'Update the zot that vim.g.zot_server_path names.'
  end
  return 'Update the zot that setup({ cmd }) names.'
end

--- Why this plugin cannot use the server whose experimental.zot is info
--- (bin: the binary, source: where it came from), or nil when it can.
function M.check(info, bin, source)
  if type(info) ~= 'table' or type(info.protocolVersion) ~= 'number' then
    return string.format(
      "zot: `%s lsp` is not zot's language server (its initialize result has no experimental.zot). %s",
      bin,
      M.fix(source)
    )
  end
  local them = string.format('zot %s (%s)', type(info.version) == 'string' and info.version or '(unknown version)', bin)
  if info.protocolVersion > P.version then
    return string.format(
      'zot: %s speaks protocol version %d; this plugin speaks %d. Update the zot plugin.',
      them,
      info.protocolVersion,
      P.version
    )
  end
  if info.protocolVersion < P.version then
    return string.format(
      'zot: %s speaks protocol version %d; this plugin speaks %d. %s',
      them,
      info.protocolVersion,
      P.version,
      M.fix(source)
    )
  end
  local rev = type(info.protocol) == 'number' and info.protocol or nil
  if not rev or rev < P.revision then
    return string.format(
      'zot: %s implements %s; this plugin needs revision %d or newer. %s',
      them,
      rev and ('protocol revision ' .. rev) or 'an older protocol revision than 11',
      P.revision,
      M.fix(source)
    )
  end
  return nil
end

return M
