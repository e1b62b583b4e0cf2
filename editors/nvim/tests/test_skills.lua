-- :ZotSkills picks a skill (name, description, the start of its body) with
-- vim.ui.select, asks for arguments, and sends the body as the prompt
-- (/skill:<name> args).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.write(
  '.claude/skills/review/SKILL.md',
  '---\nname: review\ndescription: Review code for bugs\n---\n# Review\n\nReview $ARGUMENTS for bugs.\n'
)
H.setup()
local shown
vim.ui.select = function(items, opts, on_choice)
  shown = {}
  for i, s in ipairs(items) do
    shown[i] = opts.format_item(s)
    if s.name == 'review' then
      return on_choice(s, i)
    end
  end
  on_choice(nil, nil)
end
vim.ui.input = function(opts, on_confirm)
  H.ok(opts.prompt:find('/skill:review', 1, true), 'input prompt: ' .. opts.prompt)
  on_confirm('main.go')
end

vim.cmd('ZotSkills')
H.wait('the skill run', function()
  return H.chat_text():find('reviewed it', 1, true) ~= nil
end)
H.ok(
  vim.tbl_contains(shown, 'review — Review code for bugs  │ Review · Review $ARGUMENTS for bugs.'),
  'picker item: ' .. vim.inspect(shown)
)
H.ok(H.chat_text():find('Review main.go for bugs.', 1, true), 'the body was the prompt:\n' .. H.chat_text())
H.done()
