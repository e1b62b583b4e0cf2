package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
	"time"
)

// dirSize is the bytes the files under dir take.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkCheckpoint10k is issue 33's cost: a checkpoint of a
// 10,000-file workspace with one file changed since the last one must
// take at most 50 ms and add at most 1 MB to the store. It reports
// ms/checkpoint and newbytes/checkpoint, and fails past either bound.
func BenchmarkCheckpoint10k(b *testing.B) {
	needGit(b)
	ctx := context.Background()
	home, ws := b.TempDir(), b.TempDir()
	for i := 0; i < 10000; i++ {
		write(b, filepath.Join(ws, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.go", i)),
			fmt.Sprintf("package d\n\n// file %d\nfunc F%d() int { return %d }\n", i, i, i), 0o644)
	}
	s, err := Open(ctx, home, ws)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Take(ctx, Meta{Session: "bench", Prompt: "first", Kind: KindPrompt}, nil); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	var grown int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		write(b, filepath.Join(ws, "d07", "f00007.go"), fmt.Sprintf("package d\n// change %d\n", i), 0o644)
		before := dirSize(s.dir)
		b.StartTimer()
		start := time.Now()
		if _, err := s.Take(ctx, Meta{Session: "bench", MessageIndex: i + 1, Prompt: "p", Kind: KindPrompt}, nil); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		grown += dirSize(s.dir) - before
		b.StartTimer()
	}
	ms := float64(total.Microseconds()) / 1000 / float64(b.N)
	perCp := float64(grown) / float64(b.N)
	b.ReportMetric(ms, "ms/checkpoint")
	b.ReportMetric(perCp, "newbytes/checkpoint")
	if ms > 50 {
		b.Errorf("a checkpoint took %.1f ms, over issue 33's 50 ms", ms)
	}
	if perCp > 1<<20 {
		b.Errorf("a checkpoint added %.0f bytes, over issue 33's 1 MB", perCp)
	}
}
