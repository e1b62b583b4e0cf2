-- Neovim's built-in LSP client, no zot plugin: vim.lsp.start + code
-- actions. Listing asks the model nothing; "zot: fix this" applies a fix
-- for a diagnostic; "zot: run this instruction" runs a `# zot:` comment
-- line and removes it. The edits land in the buffer, unsaved, through
-- workspace/applyEdit (the file is unchanged until :write), and the
-- answers are window/showMessage.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local orig = table.concat({
  'def add(a, b):',
  '    return a - b',
  '',
  '',
  'def fact(n):',
  '    # zot: make this iterative',
  '    return 1 if n == 0 else n * fact(n - 1)',
  '',
}, '\n')
H.write('calc.py', orig)
H.start('calc.py')

-- A diagnostic as another server (a test runner) reports it.
local diag = {
  range = { start = { line = 1, character = 4 }, ['end'] = { line = 1, character = 16 } },
  severity = 1,
  source = 'pytest',
  message = 'add(1, 2) returned -1, expected 3',
}
vim.api.nvim_win_set_cursor(0, { 2, 4 })
local titles = H.list_actions({ context = { diagnostics = { diag } } })
H.eq({ 'zot: fix this: add(1, 2) returned -1, expected 3', 'zot: explain', 'zot: add tests', 'zot: document', 'zot: refactor' }, titles, 'the actions on the diagnostic')
vim.api.nvim_win_set_cursor(0, { 6, 0 })
titles = H.list_actions()
H.eq('zot: run this instruction', titles[1], 'the first action on the instruction line')
H.eq(0, #H.model_requests(), 'model requests made by listing code actions')

-- The fix.
vim.api.nvim_win_set_cursor(0, { 2, 4 })
H.run_action('zot: fix this: add(1, 2) returned -1, expected 3', { context = { diagnostics = { diag } } })
H.wait('the fix in the buffer', function()
  return H.lines()[2] == '    return a + b'
end)
H.wait('the answer', function()
  return H.message_with('zot: Fixed the sign.') ~= nil
end)
H.wait_runs_ended(1)
local reqs = H.model_requests()
local told = vim.json.encode(reqs[1].body)
H.ok(told:find('add(1, 2) returned -1, expected 3', 1, true) and told:find('pytest', 1, true), 'the prompt names the diagnostic: ' .. told)
H.eq(orig, H.read('calc.py'), 'the file on disk before the editor saves')
H.ok(vim.bo.modified, 'the buffer is modified, not saved')

-- The instruction line.
vim.api.nvim_win_set_cursor(0, { 6, 4 })
H.run_action('zot: run this instruction')
H.wait('the instruction done', function()
  return H.message_with('zot: Made it iterative.') ~= nil
end)
H.wait_runs_ended(2)
H.eq({
  'def add(a, b):',
  '    return a + b',
  '',
  '',
  'def fact(n):',
  '    r = 1',
  '    for i in range(2, n + 1):',
  '        r *= i',
  '    return r',
}, H.lines(), 'the buffer after the instruction (its line removed)')
H.eq(orig, H.read('calc.py'), 'the file on disk before the editor saves')
vim.cmd('write')
H.eq(table.concat(H.lines(), '\n') .. '\n', H.read('calc.py'), 'the file once the editor saved')
H.done()
