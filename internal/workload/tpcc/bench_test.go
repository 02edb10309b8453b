package tpcc

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"dbio/internal/metrics"
)

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSQLiteLoad loads one warehouse (and the item table) into SQLite
// per iteration and reports the loader's rows per second and warehouses per
// minute. Run it with -benchtime=1x or a few x: each iteration is a full load.
func BenchmarkSQLiteLoad(b *testing.B) {
	var rows int64
	var took time.Duration
	for b.Loop() {
		b.StopTimer()
		inst := openSQLite(b)
		b.StartTimer()
		st, err := New(Config{Warehouses: 1, Seed: 1}).Prepare(context.Background(), inst, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		rows += st.Rows
		took += st.Duration
	}
	b.ReportMetric(float64(rows)/took.Seconds(), "rows/s")
	b.ReportMetric(float64(b.N)/took.Minutes(), "warehouses/min")
}

// BenchmarkSession runs the transaction mix of one virtual user, back to
// back, on each installed engine. Besides time and allocations per
// transaction it reports this process's CPU per transaction: on the server
// engines that is the driver's own cost; on SQLite the engine runs inside
// the process and is counted too.
func BenchmarkSession(b *testing.B) {
	for _, e := range testEngines() {
		b.Run(e.name, func(b *testing.B) {
			if e.loaded == nil {
				b.Skipf("%s server not installed", e.name)
			}
			w, inst := e.loaded(b, 2)
			col := metrics.NewCollector(w.TxTypes())
			s, err := w.NewSession(context.Background(), inst, 0, col.NewRecorder())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			// Warm the session's prepared statements and the server's caches.
			for range 200 {
				if err := s.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			cpu := processCPU()
			b.ResetTimer()
			for b.Loop() {
				if err := s.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/tx")
			col.Tick()
			var failed int64
			for _, c := range col.StepTotals() {
				failed += c.Failed
			}
			if failed > 0 {
				b.Fatalf("%d transactions failed", failed)
			}
		})
	}
}
