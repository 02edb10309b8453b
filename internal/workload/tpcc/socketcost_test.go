package tpcc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/testenv"
	"dbio/internal/workload/sqlclient"
)

// BenchmarkSocketsCost compares, in one process, what a TPC-C transaction
// costs dbio on PostgreSQL and on MariaDB (one warehouse, users back to back) with its
// sessions' sockets in Go's network poller, on blocking sockets, and as
// sqlclient's Dialect.ForUser chooses: the process's CPU per transaction
// (getrusage) and, in runs of their own since perf costs a little, its
// system calls per transaction (perf's raw_syscalls tracepoint, every
// thread of the process). Each iteration is a round of the three kinds,
// alternated so that a change in the machine's load falls on all of them
// (-benchtime=3x: three rounds); DBIO_TPCC_SOCKETS_SECONDS sets each run's
// length (5). Medians are reported, the ratios against the poller's, and
// the load average before each run.
func BenchmarkSocketsCost(b *testing.B) {
	testenv.RequireProgram(b, "perf", "apt-get install -y linux-perf")
	seconds := envInt(b, "DBIO_TPCC_SOCKETS_SECONDS", 5)
	kinds := []struct {
		name    string
		sockets sqlclient.Sockets
	}{{"poller", sqlclient.SocketsPoller}, {"blocking", sqlclient.SocketsBlocking}, {"foruser", sqlclient.SocketsByEngine}}
	for _, server := range []struct {
		engine string
		s      *testServer
	}{{"postgres", pgServer}, {"mariadb", mariaServer}} {
		b.Run(server.engine, func(b *testing.B) {
			testenv.RequireEngine(b, server.engine)
			w, inst := server.s.loaded(b, 1)
			for _, users := range []int{1, 4} {
				b.Run(fmt.Sprintf("users=%d", users), func(b *testing.B) {
					cpu := make([][]float64, len(kinds))
					calls := make([][]float64, len(kinds))
					var loads []string
					for b.Loop() {
						for k, kind := range kinds {
							w.sockets = kind.sockets
							loads = append(loads, loadAverage(b))
							cpu[k] = append(cpu[k], runBackToBack(b, w, inst, users, time.Duration(seconds)*time.Second, false))
							calls[k] = append(calls[k], runBackToBack(b, w, inst, users, time.Duration(seconds)*time.Second, true))
						}
					}
					w.sockets = sqlclient.SocketsByEngine
					for k, kind := range kinds {
						b.Logf("%-8s CPU %s µs/tx, %sx the poller's; system calls %s /tx, %sx the poller's",
							kind.name, medianRange(cpu[k], 1), medianRange(ratios(cpu[k], cpu[0]), 2), medianRange(calls[k], 1), medianRange(ratios(calls[k], calls[0]), 2))
						b.ReportMetric(median(cpu[k]), kind.name+"-cpu-µs/tx")
						b.ReportMetric(median(calls[k]), kind.name+"-syscalls/tx")
					}
					b.Logf("load average (1, 5, 15 min) before each run: %s", strings.Join(loads, "; "))
				})
			}
		})
	}
}

// runBackToBack runs users sessions back to back and returns what one
// transaction cost the process over d after a warm-up: its CPU
// in µs (getrusage), or, with countCalls, its system calls (perf stat
// attached to the process).
func runBackToBack(t testing.TB, w *Workload, inst engine.Instance, users int, d time.Duration, countCalls bool) float64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	col := metrics.NewCollector(w.TxTypes())
	// The warm-up (statements prepared, caches filled) is the first
	// warmupPerUser transactions of each user, counted as they start.
	const warmupPerUser = 100
	var stop atomic.Bool
	var started atomic.Int64
	warm := make(chan struct{})
	wait := runUsers(ctx, t, w, inst, users, col, func(int) bool {
		if started.Add(1) == int64(users*warmupPerUser) {
			close(warm)
		}
		return !stop.Load()
	})
	defer func() {
		stop.Store(true)
		wait()
	}()
	<-warm
	col.Reset()
	var perf *exec.Cmd
	out := filepath.Join(t.TempDir(), "perf")
	if countCalls {
		perf = exec.Command("perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-o", out, "-p", strconv.Itoa(os.Getpid()))
		if err := perf.Start(); err != nil {
			t.Fatal(err)
		}
	}
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	time.Sleep(d)
	col.Tick()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	var txs, failed int64
	for _, c := range col.StepTotals() {
		txs += c.Completed()
		failed += c.Failed
	}
	if txs == 0 || failed > 0 {
		t.Fatalf("%d users ran %d transactions in %s, %d failed", users, txs, d, failed)
	}
	if !countCalls {
		used := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		return float64(used.Microseconds()) / float64(txs)
	}
	perf.Process.Signal(os.Interrupt)
	perf.Wait()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Split(line, ","); len(f) > 2 && f[2] == "raw_syscalls:sys_enter" {
			if n, err := strconv.ParseFloat(f[0], 64); err == nil {
				return n / float64(txs)
			}
		}
	}
	t.Fatalf("perf stat counted no system calls:\n%s", b)
	return 0
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes.
func loadAverage(t testing.TB) string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func envInt(t testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: give a whole number of at least 1", name, v)
	}
	return n
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// ratios are xs over base run by run: each run against the poller's of
// its round, which the machine's load changed least since.
func ratios(xs, base []float64) []float64 {
	r := make([]float64, len(xs))
	for i := range xs {
		r[i] = xs[i] / base[i]
	}
	return r
}

// medianRange writes the median of xs and, over several runs, their
// range, with digits decimals.
func medianRange(xs []float64, digits int) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', digits, 64) }
	if len(xs) == 1 {
		return f(xs[0])
	}
	return f(median(xs)) + " (" + f(slices.Min(xs)) + "–" + f(slices.Max(xs)) + ")"
}
