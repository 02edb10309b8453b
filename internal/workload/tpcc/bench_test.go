package tpcc

import (
	"bytes"
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/testenv"
	"dbio/internal/workload"
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
		st, err := New(Config{Warehouses: 1, Loading: workload.Loading{Seed: 1}}).Prepare(context.Background(), inst, io.Discard)
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
			testenv.RequireEngine(b, e.name)
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

// discard is a bulk path that throws the text away: the benchmark measures
// the loader's own cost, generating and encoding rows.
type discard struct{}

func (discard) exec(context.Context, string) error                        { return nil }
func (discard) load(context.Context, string, string, *bytes.Buffer) error { return nil }
func (discard) close(bool) error                                          { return nil }

// BenchmarkGenerateWarehouse is the loader's own cost for one warehouse:
// generating its rows and encoding them in the text COPY and LOAD DATA read.
func BenchmarkGenerateWarehouse(b *testing.B) {
	b.ReportAllocs()
	sink := newTextSink(discard{}, "BEGIN", "2006-01-02 15:04:05.999999")
	g := &generator{now: time.Now(), sink: sink}
	cpu := processCPU()
	for i := 0; b.Loop(); i++ {
		g.r = newRnd(1, uint64(i)+2, Constants{})
		if err := g.warehouse(context.Background(), 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Milliseconds())/float64(b.N), "cpu-ms/warehouse")
}
