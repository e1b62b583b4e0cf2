package main

import (
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile to $ZOT_CPUPROFILE when set, for
// benchmarking the fronts; it returns the stop function.
func startProfile() func() {
	path := os.Getenv("ZOT_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}
