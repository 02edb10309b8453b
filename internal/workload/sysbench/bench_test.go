package sysbench

import (
	"context"
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

// BenchmarkSession runs oltp_read_write transactions of one user back to
// back on each engine. Besides time and allocations per transaction it
// reports this process's CPU per transaction: on the server engines that is
// the client's own cost, what sysbench's C client is measured against; on
// SQLite the engine runs inside the process and is counted too.
func BenchmarkSession(b *testing.B) {
	for _, name := range engineNames {
		b.Run(name, func(b *testing.B) {
			inst := instance(b, name)
			cfg := DefaultConfig()
			cfg.Tables, cfg.TableSize = 2, 10000
			w := prepare(b, inst, cfg)
			col := metrics.NewCollector(w.TxTypes())
			// A cancellable context, as the runner's is.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := w.NewSession(ctx, inst, 0, col.NewRecorder())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
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
			var committed, failed int64
			for _, c := range col.StepTotals() {
				committed += c.Committed
				failed += c.Failed
			}
			if failed > 0 || committed < int64(b.N) {
				b.Fatalf("%d transactions committed and %d failed of %d", committed, failed, b.N+200)
			}
		})
	}
}
