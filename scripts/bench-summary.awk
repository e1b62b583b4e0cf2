# Summarises `go test -bench` output (make bench): the search tools against
# ripgrep, zot's host CPU per prompt, the growth of a didChange burst and a
# checkpoint's cost, pi extensions' start-up, memory and tool round trip,
# with the goals from README.md.
function metric(name,   i) {
	for (i = 3; i < NF; i++) if ($(i+1) == name) return $i
	return ""
}
/^BenchmarkSearch/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkSearch/, "", name)
	goal = (name ~ /find/) ? "1.2" : "1.5"
	search[++ns] = sprintf("  %-32s %8s ms  rg %8s ms  wall %5sx  cpu %5sx  (goal <= %sx)", name,
		metric("ms/op"), metric("rg-ms/op"), metric("x-rg-wall"), metric("x-rg-cpu"), goal)
}
/^BenchmarkRPCSessionCPU/ {
	cpu = sprintf("  CPU per prompt: %s ms over 20 prompts, %s ms over 400 (%sx; goal <= 1.2x)\n  RSS after 400 prompts: %s MB",
		metric("cpu-ms/prompt@20"), metric("cpu-ms/prompt@400"), metric("x-400-vs-20"), metric("MB-RSS@400"))
}
/^BenchmarkExtensionHostScale\// {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkExtensionHostScale\//, "", name)
	line = sprintf("  %-14s start-up %8s ms  host CPU %6s ms  idle RSS %6s MiB  threads %5s  reload %6s ms", name,
		metric("startup-ms"), metric("host-cpu-ms"), metric("idle-rss-MiB"), metric("threads"), metric("reload-ms"))
	if (metric("reload-x-N1") != "")
		line = line sprintf("\n  %-14s N=100/N=1: start-up %sx  CPU %sx  RSS %sx  reload %sx (goal <= 1.2x, <= 250 ms)", "",
			metric("startup-x-N1"), metric("host-cpu-x-N1"), metric("idle-rss-x-N1"), metric("reload-x-N1"))
	ext[++ne] = line
}
/^BenchmarkChangeBurstGrowth/ {
	burst = sprintf("  50k keystrokes %s ms, 100k %s ms (%sx; goal <= 2.5x)", metric("ms@50k"), metric("ms@100k"), metric("x-100k-vs-50k"))
}
/^BenchmarkCodeActionList\// {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkCodeActionList\//, "", name)
	actions[++na] = sprintf("  %-14s %8s ms mean  %8s ms p99  (goal <= 5 ms)", name, metric("ms/op"), metric("p99-ms"))
}
/^BenchmarkCheckpoint10k/ {
	ckpt = sprintf("  10,000 files, one changed: %s ms (median %s, git CPU %s ms), %s bytes new storage per checkpoint (goal <= 50 ms, <= 1 MB)",
		metric("ms/checkpoint"), metric("median-ms"), metric("git-cpu-ms"), metric("newbytes/checkpoint"))
}
/^BenchmarkRPCPiExtensions20(OneProcess|ProcessEach)?-/ {
	name = ($1 ~ /OneProcess/) ? "as one pi package" : ($1 ~ /ProcessEach/) ? "a Node process each" : "(the default: shared)"
	pi[++npi] = sprintf("  20 pi extensions %-24s spawn -> first prompt done %8s ms  RSS together %7s MB  (goal <= 300 ms, <= 60 MB)", name,
		metric("ms/spawn-to-first-prompt-done"), metric("MB-RSS-total"))
}
/^BenchmarkPiToolRoundTrip/ {
	pi[++npi] = sprintf("  pi tool call round trip: %s us of host time over the tool's own (goal <= 1000 us)", metric("µs-host/round-trip"))
}
END {
	print "\n== summary =="
	if (na) { print "code action list, 10,000-line buffer (zot lsp round trip):"; for (i = 1; i <= na; i++) print actions[i] }
	if (ne) { print "extension host at scale (zot rpc, N global extensions):"; for (i = 1; i <= ne; i++) print ext[i] }
	if (ns) { print "search tools vs ripgrep (same matches):"; for (i = 1; i <= ns; i++) print search[i] }
	if (cpu != "") { print "zot rpc, process rusage:"; print cpu }
	if (burst != "") { print "zot lsp, a burst of incremental didChange:"; print burst }
	if (ckpt != "") { print "checkpoints (agent/checkpoint):"; print ckpt }
	if (npi) { print "pi extensions (the real runtime):"; for (i = 1; i <= npi; i++) print pi[i] }
}
