package runner

import (
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzMemAvailable reads /proc/meminfo from a fixture /proc: the answer is
// MemAvailable in bytes, or 0 (unknown) when it cannot be read, never a
// figure that wrapped.
func FuzzMemAvailable(f *testing.F) {
	snap, err := os.ReadFile(filepath.Join("..", "telemetry", "testdata", "snap", "t0", "proc", "meminfo"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(snap)
	f.Add([]byte("MemAvailable: 18014398509481985 kB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		proc := t.TempDir()
		if err := os.WriteFile(filepath.Join(proc, "meminfo"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		got := memAvailable(proc)
		if got == 0 {
			return
		}
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 2 && fields[0] == "MemAvailable:" {
				kb, _ := strconv.ParseUint(fields[1], 10, 64)
				if hi, lo := bits.Mul64(kb, 1024); hi != 0 || lo != got {
					t.Errorf("MemAvailable %s kB read as %d bytes", fields[1], got)
				}
				return
			}
		}
		t.Errorf("%d bytes without a MemAvailable line", got)
	})
}
