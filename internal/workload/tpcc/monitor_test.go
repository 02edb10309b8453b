package tpcc

import (
	"context"
	"io"
	"math"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/arrival"
	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/testenv"
	"dbio/internal/vusers"
	"dbio/internal/workload"
)

// monitorRun is what runMonitor measured.
type monitorRun struct {
	totals  []metrics.TxCounts
	all     metrics.TxCounts
	elapsed time.Duration
}

// runMonitor runs terminals sharing pool connections to inst the way a
// run's step does (the runner's monitorSet): each transaction's latency from
// its submission goes to the corrected histogram, its service time to the
// plain one. Nothing before warm is counted; during, when set, runs in the
// measurement and the measurement ends measure after it returns.
func runMonitor(t *testing.T, w *Workload, inst engine.Instance, terminals, pool int, warm, measure time.Duration, during func()) monitorRun {
	t.Helper()
	col := metrics.NewCollector(w.TxTypes())
	terms := make([]vusers.Terminal, terminals)
	for i := range terms {
		term, err := w.NewTerminal(i)
		if err != nil {
			t.Fatal(err)
		}
		terms[i] = benchTerminal{term}
	}
	recs := make([]*metrics.Recorder, pool)
	ctx := context.Background()
	g, err := vusers.Start(ctx, vusers.Users{
		N: pool,
		Open: func(ctx context.Context, c int) (vusers.Session, error) {
			recs[c] = col.NewRecorder()
			return w.NewConnection(ctx, inst, c, recs[c])
		},
		Terminals: &vusers.Terminals{N: terminals, Terminal: func(i int) vusers.Terminal { return terms[i] },
			Begin: func(c int, tm arrival.Timing) { recs[c].Begin(tm.Delay(), tm.Late(arrival.DefaultTolerance)) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Stop()
	wait := func(d time.Duration) {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case err := <-g.Lost():
			t.Fatal(err)
		}
	}
	wait(warm)
	col.Tick()
	col.Reset()
	start := time.Now()
	if during != nil {
		during()
	}
	wait(measure)
	col.Tick()
	r := monitorRun{totals: col.StepTotals(), elapsed: time.Since(start)}
	r.all = metrics.Merge(r.totals...)
	return r
}

// TestTerminalsAtTheSpecificationsRate runs 200 paced terminals over 8
// connections on PostgreSQL and checks that they commit New-Orders at the
// rate the specification's pacing sets, and, over one connection with the
// server held still for half a second, that the latency from submission
// includes the wait for the connection.
//
// The keying and think times are a tenth of the specification's (the test
// would otherwise take minutes), every one of them the same tenth: the mix,
// the ratios between types and the way the latency is measured stay. The
// expectation: over the standard mix a terminal's mean keying time is
// 0.45x18 + 0.43x3 + 0.12x2 = 9.63 s and its mean think time 0.45x12 +
// 0.43x12 + 0.04x10 + 0.08x5 = 11.36 s (each truncated at ten means, which
// changes it by 0.005 %), a cycle of 20.99 s plus the response time, and
// 45 % of its transactions are New-Orders: 60 x 0.45 / 20.99 = 1.286
// New-Orders per minute per terminal, 12.86 per warehouse of ten
// terminals. At a tenth of the times that is 12.86 per minute per terminal.
// The test uses 2 warehouses (100 terminals each, past the specification's
// ten, to keep the load short): the rate per terminal does not depend on
// the warehouses.
func TestTerminalsAtTheSpecificationsRate(t *testing.T) {
	testenv.RequireEngine(t, "postgres")
	const (
		terminals = 200
		pool      = 8
		scale     = 0.1
	)
	_, inst := pgServer.loaded(t, 2)
	w := New(Config{Warehouses: 2, KeyingThinking: true, Loading: workload.Loading{Seed: 1, Reuse: true}})
	w.pacingScale = scale
	if _, err := w.Prepare(context.Background(), inst, io.Discard); err != nil {
		t.Fatal(err)
	}
	cycle := w.meanCycle()
	specCycle := 20990 * time.Millisecond
	if want := time.Duration(float64(specCycle) * scale); math.Abs(float64(cycle-want)) > float64(10*time.Millisecond) {
		t.Fatalf("mean cycle %v, want %v from the specification's times", cycle, want)
	}

	t.Run("8 connections", func(t *testing.T) {
		r := runMonitor(t, w, inst, terminals, pool, 2*cycle+time.Second, 10*cycle, nil)
		no := r.totals[TxNewOrder]
		// The response time lengthens each cycle; the measured mean is used.
		meanResponse := time.Duration(r.all.Corrected.Mean()) * time.Microsecond
		perTerminal := 60 * 0.45 / (cycle + meanResponse).Seconds()
		want := perTerminal * terminals
		got := metrics.PerMinute(no.Committed+no.RolledBack, r.elapsed)
		t.Logf("%d terminals over %d connections: %.0f New-Orders/min (%.2f per terminal, %.2f per ten terminals at full pacing), expected %.0f; response time mean %v, service mean %v",
			terminals, pool, got, got/terminals, got/terminals*10*scale, want, meanResponse, time.Duration(r.all.Latency.Mean())*time.Microsecond)
		if math.Abs(got-want) > 0.1*want {
			t.Errorf("New-Orders per minute %.0f, want %.0f within 10 %%", got, want)
		}
		if r.all.Failed > 0 {
			t.Errorf("%d transactions failed", r.all.Failed)
		}
		if r.all.Corrected == nil || r.all.Corrected.TotalCount() != r.all.Latency.TotalCount() {
			t.Fatalf("every completed transaction needs a latency from its submission beside its service time")
		}
		if r.all.Corrected.Mean() < r.all.Latency.Mean() {
			t.Errorf("mean latency from submission %.0f µs below the service time's %.0f µs", r.all.Corrected.Mean(), r.all.Latency.Mean())
		}
	})

	t.Run("1 connection, server held still", func(t *testing.T) {
		// Half a second with the warehouse table locked: the one
		// connection's New-Order or Payment waits in the server (its
		// service time), and every transaction submitted meanwhile waits
		// for the connection (its response time only).
		const stall = 500 * time.Millisecond
		hold := func() {
			tx, err := inst.DB().Begin()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec("LOCK TABLE warehouse IN ACCESS EXCLUSIVE MODE"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(stall) // the stall itself, not a wait for an event
			tx.Rollback()
		}
		r := runMonitor(t, w, inst, terminals, 1, 2*cycle, cycle, hold)
		waited := countAtLeast(r.all.Corrected, 100*time.Millisecond)
		served := countAtLeast(r.all.Latency, 100*time.Millisecond)
		t.Logf("over one connection: %d transactions took 100 ms or more from their submission, %d in the server", waited, served)
		// About 95 transactions a second are submitted: some 35 in the
		// first 400 ms of the stall, each waiting at least 100 ms.
		if waited < served+10 {
			t.Errorf("%d transactions took 100 ms or more from submission and %d in the server: the wait for the connection is missing from the response time", waited, served)
		}
	})
}

// countAtLeast counts a latency histogram's values (µs) of at least d.
func countAtLeast(h *hdrhistogram.Histogram, d time.Duration) int64 {
	var n int64
	for _, bar := range h.Distribution() {
		if bar.From >= d.Microseconds() {
			n += bar.Count
		}
	}
	return n
}
