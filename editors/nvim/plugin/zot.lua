-- zot's user commands. Nothing starts until one is used; setup() is
-- optional (require("zot").setup({...}) to configure).
if vim.g.loaded_zot then
  return
end
vim.g.loaded_zot = true

local function cmd(name, fn, opts)
  vim.api.nvim_create_user_command(name, function(o)
    require('zot.commands')[fn](o)
  end, opts)
end

local function complete(fn)
  return function(...)
    return require('zot.commands')[fn](...)
  end
end

cmd('ZotPrompt', 'prompt', {
  nargs = '*',
  range = true,
  complete = complete('complete_prompt'),
  desc = 'zot: send a prompt (a range sends the selection as context; /name runs a command)',
})
cmd('ZotCommand', 'command', {
  nargs = '+',
  complete = complete('complete_command'),
  desc = 'zot: run a slash command',
})
cmd('ZotAbort', 'abort', { bang = true, desc = 'zot: stop the run (! also drops the queued prompts)' })
cmd('ZotChat', 'chat', { desc = 'zot: show or hide the chat' })
cmd('ZotChatNew', 'chat_new', { desc = 'zot: open another chat, with its own zot (session, run, mode, model)' })
cmd('ZotChatClose', 'chat_close', { desc = "zot: close this chat (a :ZotChatNew chat's zot stops; its session stays)" })
cmd('ZotNew', 'new', { desc = 'zot: start a new session' })
cmd('ZotSessions', 'sessions', { desc = 'zot: pick a saved session and resume it' })
cmd('ZotCheckpoints', 'checkpoints', {
  desc = 'zot: pick a checkpoint (before each prompt): restore code, conversation or both, or compare',
})
cmd('ZotModel', 'model', { nargs = '?', desc = 'zot: pick the model (or :ZotModel id)' })
cmd('ZotMode', 'mode', {
  nargs = '?',
  complete = complete('complete_mode'),
  desc = 'zot: set the permission mode: auto, ask or readonly',
})
cmd('ZotExtensions', 'extensions', { desc = 'zot: list the extensions and their state' })
cmd('ZotReload', 'reload', { desc = 'zot: reload the extensions' })
cmd('ZotLog', 'log', { desc = "zot: show zot's stderr and the extensions' logs ($ZOT_HOME/logs)" })
cmd('ZotMcp', 'mcp', {
  nargs = '*',
  complete = complete('complete_mcp'),
  desc = 'zot: list the MCP servers and their state (:ZotMcp restart NAME restarts one)',
})
cmd('ZotSkills', 'skills', { desc = 'zot: pick a skill and run it (/skill:<name> args)' })
cmd('ZotShortcut', 'shortcut', {
  nargs = '?',
  complete = complete('complete_shortcut'),
  desc = "zot: run a pi extension's shortcut (registerShortcut) by its key, or pick one",
})
-- Pick an extension shortcut; <Plug>(zot-shortcut-KEY) runs one (defined
-- once zot lists it).
vim.keymap.set('n', '<Plug>(zot-shortcut)', function()
  require('zot').shortcut()
end, { desc = 'zot: pick an extension shortcut and run it' })
