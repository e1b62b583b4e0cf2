package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfile writes a CPU profile to $ZOT_CPUPROFILE and a heap profile
// to $ZOT_MEMPROFILE (at exit) when set, for benchmarking the fronts; it
// returns the stop function. The heap profile records every allocation
// site (`go tool pprof -sample_index=alloc_space`): with large messages
// (BenchmarkPromptMemory) each copy of a prompt shows up as its own site.
func startProfile() func() {
	stopCPU := func() {}
	if path := os.Getenv("ZOT_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			stopCPU = func() { pprof.StopCPUProfile(); f.Close() }
		}
	}
	memPath := os.Getenv("ZOT_MEMPROFILE")
	return func() {
		stopCPU()
		if memPath == "" {
			return
		}
		if f, err := os.Create(memPath); err == nil {
			runtime.GC() // up-to-date in-use figures
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
}
