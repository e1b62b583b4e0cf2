-- Streams 25k text_deltas into the chat and MEASURES (does not assert) how
-- long the UI thread was blocked at most: a 5 ms repeating timer records
-- the gaps between its ticks while the stream runs.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
H.setup()
local uv = vim.uv or vim.loop
local N = 25000

require('zot.client').with_root(H.ws, function() end)
H.wait_ready()
require('zot').open_chat({ focus = false })

local period = 5
local last, max_gap, gaps = nil, 0, {}
local timer = uv.new_timer()
timer:start(period, period, function()
  local now = uv.hrtime()
  if last then
    local g = (now - last) / 1e6
    gaps[#gaps + 1] = g
    if g > max_gap then
      max_gap = g
    end
  end
  last = now
end)

local t0 = uv.hrtime()
vim.cmd('ZotPrompt stream a lot')
local run = H.wait_run(nil, 100000)
local ms = (uv.hrtime() - t0) / 1e6
timer:stop()
timer:close()

local chat = H.chat()
H.eq(N, chat.deltas, 'deltas received')
local lines = vim.api.nvim_buf_line_count(chat.buf)
local count = 0
for _, l in ipairs(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)) do
  if l == 'lorem ipsum dolor' then
    count = count + 1
  end
end
H.eq(N, count, 'every delta is in the chat buffer')
H.ok(not run.error, 'run error')
table.sort(gaps)
local p99 = gaps[math.max(1, math.floor(#gaps * 0.99))] or 0
H.log(
  string.format(
    'measure: %d deltas in %.0f ms (%.0f/s), %d draws, %d chat lines; UI thread blocked at most %.1f ms (max %d ms timer gap %.1f ms, p99 %.1f ms; Neovim %s)',
    N,
    ms,
    N / ms * 1000,
    chat.flushes,
    lines,
    math.max(0, max_gap - period),
    period,
    max_gap,
    p99,
    tostring(vim.version().major .. '.' .. vim.version().minor .. '.' .. vim.version().patch)
  )
)
H.done()
