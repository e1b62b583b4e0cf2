# Summarises `go test -bench` output (make bench): the search tools against
# ripgrep and zot's host CPU per prompt, with the goals from README.md.
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
END {
	print "\n== summary =="
	if (ns) { print "search tools vs ripgrep (same matches):"; for (i = 1; i <= ns; i++) print search[i] }
	if (cpu != "") { print "zot rpc, process rusage:"; print cpu }
}
