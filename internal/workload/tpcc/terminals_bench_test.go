package tpcc

import (
	"bufio"
	"context"
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dbio/internal/arrival"
	"dbio/internal/engine/txerr"
	"dbio/internal/metrics"
	"dbio/internal/vusers"
	"dbio/internal/workload"
)

var (
	benchTerminals = flag.Int("terminals.n", 15000, "BenchmarkTerminals: terminals")
	benchPool      = flag.Int("terminals.pool", 32, "BenchmarkTerminals: connections they share")
	benchWarm      = flag.Duration("terminals.warmup", 25*time.Second, "BenchmarkTerminals: time before the measurement (a terminal's mean cycle is about 21 s)")
	benchMeasure   = flag.Duration("terminals.measure", 30*time.Second, "BenchmarkTerminals: measured time")
	benchService   = flag.Duration("terminals.service", time.Millisecond, "BenchmarkTerminals: the fake database's time per transaction")
)

// fakeExecutor answers every transaction after a fixed service time, as a
// database would that is never the bottleneck; a New-Order with the unused
// item rolls back, as the real ones do.
type fakeExecutor struct{ service time.Duration }

func (f fakeExecutor) wait(ctx context.Context) error {
	if f.service <= 0 {
		return nil
	}
	return sleepCtx(ctx, f.service)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if !workload.Sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}

func (f fakeExecutor) newOrder(ctx context.Context, in *newOrderIn) error {
	if err := f.wait(ctx); err != nil {
		return err
	}
	if in.lines[len(in.lines)-1].itemID > Items {
		return errRollback
	}
	return nil
}
func (f fakeExecutor) payment(ctx context.Context, _ *paymentIn) error         { return f.wait(ctx) }
func (f fakeExecutor) orderStatus(ctx context.Context, _ *orderStatusIn) error { return f.wait(ctx) }
func (f fakeExecutor) delivery(ctx context.Context, _ *deliveryIn) error       { return f.wait(ctx) }
func (f fakeExecutor) stockLevel(ctx context.Context, _ *stockLevelIn) error   { return f.wait(ctx) }
func (f fakeExecutor) close() error                                            { return nil }

// benchTerminal adapts a TPC-C terminal to vusers, as the runner does.
type benchTerminal struct{ workload.Terminal }

func (t benchTerminal) Run(ctx context.Context, conn vusers.Session) error {
	return t.Terminal.Run(ctx, conn.(workload.Session))
}

// BenchmarkTerminals is the transaction monitor alone, without a database:
// 15,000 TPC-C terminals with the specification's keying and think times
// share 32 connections to a fake executor, through the same session loop
// (vusers) and terminals a run uses. It reports the share of transactions
// that started late (waited for a connection beyond the 10 ms tolerance,
// the scheduler's own lateness included), the process's peak resident
// memory, the heap each terminal takes, and the achieved rate beside the one
// the pacing allows. Run it once (-benchtime 1x); its flags
// (-args -terminals.n=...) change the scale.
func BenchmarkTerminals(b *testing.B) {
	for b.Loop() {
		runTerminalsBench(b)
	}
}

func runTerminalsBench(b *testing.B) {
	n, pool := *benchTerminals, *benchPool
	w := New(Config{Warehouses: max(1, n/TerminalsPerWarehouse), KeyingThinking: true, Loading: workload.Loading{Seed: 1}})
	w.setConstants(Constants{CLast: 100, CID: 200, OLIID: 300})
	col := metrics.NewCollector(w.TxTypes())
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	terms := make([]vusers.Terminal, n)
	for i := range terms {
		t, err := w.NewTerminal(i)
		if err != nil {
			b.Fatal(err)
		}
		terms[i] = benchTerminal{t}
	}
	recs := make([]*metrics.Recorder, pool)
	never := func(error) txerr.Class { return txerr.Fatal }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := vusers.Start(ctx, vusers.Users{
		N: pool,
		Open: func(_ context.Context, c int) (vusers.Session, error) {
			recs[c] = col.NewRecorder()
			return &pooledConn{conn{classify: never, exec: fakeExecutor{*benchService}, rec: recs[c]}}, nil
		},
		Terminals: &vusers.Terminals{N: n, Terminal: func(i int) vusers.Terminal { return terms[i] },
			Begin: func(c int, t arrival.Timing) { recs[c].Begin(t.Delay(), t.Late(arrival.DefaultTolerance)) }},
	})
	if err != nil {
		b.Fatal(err)
	}
	// The reference: on this (shared) machine a goroutine sleeping on a
	// timer wakes late too; its late share in the same measurement is the
	// floor the monitor's can be judged against.
	var timerWakes, timerLate atomic.Int64
	measuringRef := make(chan struct{})
	go func() {
		<-measuringRef
		for i := 0; ctx.Err() == nil; i++ {
			d := time.Duration(1+i%50) * time.Millisecond
			t0 := time.Now()
			if !workload.Sleep(ctx, d) {
				return
			}
			timerWakes.Add(1)
			if time.Since(t0)-d > arrival.DefaultTolerance {
				timerLate.Add(1)
			}
		}
	}()
	// The collector is drained once a second, as a run's sampler does.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	deadline := time.After(*benchWarm)
	measuring := false
	var start time.Time
	for done := false; !done; {
		select {
		case <-tick.C:
			col.Tick()
		case <-deadline:
			if measuring {
				done = true
				break
			}
			col.Tick()
			col.Reset()
			measuring, start = true, time.Now()
			close(measuringRef)
			deadline = time.After(*benchMeasure)
		case err := <-g.Lost():
			b.Fatal(err)
		}
	}
	col.Tick()
	elapsed := time.Since(start)
	all := metrics.Merge(col.StepTotals()...)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	g.Stop()
	if all.Paced == 0 {
		b.Fatal("no transaction ran")
	}
	b.ReportMetric(100*float64(all.Late)/float64(all.Paced), "late-%")
	if n := timerWakes.Load(); n > 0 {
		b.ReportMetric(100*float64(timerLate.Load())/float64(n), "timer-late-%")
	}
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MB")
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(n), "heap-B/terminal")
	b.ReportMetric(float64(all.Paced)/elapsed.Seconds(), "tx/s")
	b.ReportMetric(float64(n)*w.TerminalRate(), "paced-tx/s")
	b.ReportMetric(float64(all.Corrected.ValueAtQuantile(99))/1000, "p99-from-submit-ms")
}

// peakRSS is this process's peak resident memory in bytes (VmHWM).
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// countingExecutor is fakeExecutor that closes done after n transactions.
type countingExecutor struct {
	fakeExecutor
	count *atomic.Int64
	n     int64
	done  chan struct{}
}

func (c countingExecutor) payment(ctx context.Context, in *paymentIn) error {
	if c.count.Add(1) == c.n {
		close(c.done)
	}
	return c.fakeExecutor.payment(ctx, in)
}

// Terminals run their mix through the monitor's few connections, each
// connection recording what it ran: run with -race, this is the monitor's
// concurrency check on the real terminals.
func TestTerminalsOnAFakeExecutor(t *testing.T) {
	const terminals, pool, payments = 300, 4, 400
	w := New(Config{Warehouses: 30, KeyingThinking: true, Loading: workload.Loading{Seed: 1}})
	w.pacingScale = 0.001 // a cycle of about 21 ms
	w.setConstants(Constants{CLast: 1, CID: 2, OLIID: 3})
	col := metrics.NewCollector(w.TxTypes())
	var count atomic.Int64
	done := make(chan struct{})
	terms := make([]vusers.Terminal, terminals)
	for i := range terms {
		term, err := w.NewTerminal(i)
		if err != nil {
			t.Fatal(err)
		}
		terms[i] = benchTerminal{term}
	}
	recs := make([]*metrics.Recorder, pool)
	g, err := vusers.Start(context.Background(), vusers.Users{
		N: pool,
		Open: func(_ context.Context, c int) (vusers.Session, error) {
			recs[c] = col.NewRecorder()
			exec := countingExecutor{count: &count, n: payments, done: done}
			return &pooledConn{conn{classify: func(error) txerr.Class { return txerr.Fatal }, exec: exec, rec: recs[c]}}, nil
		},
		Terminals: &vusers.Terminals{N: terminals, Terminal: func(i int) vusers.Terminal { return terms[i] },
			Begin: func(c int, tm arrival.Timing) { recs[c].Begin(tm.Delay(), tm.Late(arrival.DefaultTolerance)) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	g.Stop()
	col.Tick()
	totals := col.StepTotals()
	all := metrics.Merge(totals...)
	if all.Paced != all.Completed()+all.Failed || all.Corrected == nil {
		t.Errorf("%d transactions paced, %d completed, %d failed: every one is timed from its submission", all.Paced, all.Completed(), all.Failed)
	}
	if got := totals[TxPayment].Completed(); got < payments {
		t.Errorf("%d payments recorded, want at least %d", got, payments)
	}
	if totals[TxNewOrder].Completed() == 0 {
		t.Error("no New-Order ran")
	}
}
