package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/memlimit"
	"dbio/internal/results"
	"dbio/internal/testenv"
)

// runGroups are the cgroups of any kind a run left in any hierarchy
// (dbio-<kind>-<run id>-<pid>).
func runGroups(run string) []string {
	var left []string
	for _, pattern := range []string{"/sys/fs/cgroup/*/dbio-*-", "/sys/fs/cgroup/dbio-*-"} {
		m, _ := filepath.Glob(pattern + filepath.Base(run) + "-*")
		left = append(left, m...)
	}
	return left
}

// A TPC-C run with --server-memory records the cap with the engine and says
// it in the summary, records the waits the database measured itself, and
// removes its memory cgroup at the end, whether the run completed (MariaDB)
// or was interrupted (Ctrl-C) in its second step (PostgreSQL, whose first
// step has finished, under a block-I/O cgroup as well).
func TestServerMemoryAndDatabaseWaitsEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real engines")
	}
	testenv.Require(t, os.Geteuid() == 0, "root", testenv.HowRoot)
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil {
		if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err != nil || !strings.Contains(string(b), "memory") {
			testenv.Require(t, false, "memory cgroups", testenv.HowRootAndMemcg)
		}
	}
	tests := []struct {
		engine    string
		interrupt bool
		// waits are the database-seen waits a short run must record.
		waits []string
		// settings make the engine do that I/O in a short run.
		settings []string
	}{
		{"postgres", true, []string{results.DBWaitSync.Await(), results.DBWaitLogWrite.Await()}, nil},
		// MariaDB times its data file syncs (not its redo log's): InnoDB
		// syncs them when its page cleaner flushes, which a few seconds of
		// a loaded machine may not reach unless no dirty page may wait.
		{"mariadb", false, []string{results.DBWaitDataSync.Await()}, []string{"--setting", "innodb_max_dirty_pages_pct=0"}},
	}
	for _, tt := range tests {
		name := tt.engine
		if tt.interrupt {
			name += " interrupted"
		}
		t.Run(name, func(t *testing.T) {
			testenv.RequireEngine(t, tt.engine)
			target, base := loadedTarget(t, tt.engine)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.interrupt {
				go func() {
					tick := time.NewTicker(20 * time.Millisecond)
					defer tick.Stop()
					for ctx.Err() == nil && !seriesHas(base, "users-2", "measure") {
						<-tick.C
					}
					cancel()
				}()
			}
			var out bytes.Buffer
			args := []string{"tpcc", "--engine", tt.engine, "--reuse", "--target", target, "--results", base,
				"--warehouses", "1", "--users", "1,2", "--ramp-time", "1s", "--runtime", "3s", "--server-memory", "1GB"}
			args = append(args, tt.settings...)
			if tt.interrupt {
				// A block-I/O group beside the memory group: neither may
				// outlive the interrupted run.
				args = append(args, "--limit", "riops=1000000,wiops=1000000")
			}
			code := run(ctx, testApp(&out), args)
			want := exitOK
			if tt.interrupt {
				want = exitInterrupted
			}
			if code != want {
				t.Fatalf("exit code %d, want %d:\n%s", code, want, out.String())
			}
			dir := runDir(base)
			if left := runGroups(dir); len(left) > 0 {
				t.Errorf("the run left its cgroups: %v", left)
			}
			l, err := results.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Run.Engines) != 1 || l.Run.Engines[0].MemoryLimit == nil || l.Run.Engines[0].MemoryLimit.Bytes != 1<<30 {
				t.Fatalf("run.json's engine does not record the 1 GB cap: %+v", l.Run.Engines)
			}
			if got := l.Run.Config.EngineOptions.ServerMemoryBytes; got != 1<<30 {
				t.Errorf("run.json's config records server memory %d, want 1 GB", got)
			}
			if !strings.Contains(out.String(), "memory:  server capped at 1.0 GiB, page cache included") ||
				!strings.Contains(out.String(), "I/O latency, ms per operation: as the database saw it") {
				t.Errorf("the summary does not show the cap and the database-seen latency:\n%s", out.String())
			}
			// The group is sampled every second the run holds it: the cap,
			// and the server's memory under it, page cache included.
			limitCol, usageCol := l.Series.Column(results.MetricMemcgLimit), l.Series.Column(results.MetricMemcgUsage)
			sampled := 0
			for _, row := range l.Series.Rows {
				if limitCol >= 0 && usageCol >= 0 && limitCol < len(row.Values) && usageCol < len(row.Values) &&
					row.Values[limitCol] == float64(1<<30)/1e6 && row.Values[usageCol] > 0 && row.Values[usageCol] <= row.Values[limitCol] {
					sampled++
				}
			}
			if sampled == 0 {
				t.Errorf("series.csv has no second with the memory group's cap and usage (%s, %s)", results.MetricMemcgLimit, results.MetricMemcgUsage)
			}
			if st, ok := l.Steps[0].Telemetry.Metrics[results.MetricMemcgUsage]; !ok || st.Max <= 0 {
				t.Errorf("the first step's summary has no usage of the memory group: %+v", st)
			}
			for _, m := range tt.waits {
				col := l.Series.Column(m)
				positive := 0
				for _, row := range l.Series.Rows {
					if col >= 0 && col < len(row.Values) && row.Values[col] > 0 {
						positive++
					}
				}
				if positive == 0 {
					t.Errorf("series.csv has no second with a positive %s", m)
				}
			}
		})
	}
}

// A PostgreSQL server loading its data under a cap smaller than the data
// fills its group to the cap through the page cache and stays under it, and
// the run says so second by second (series.csv), per step (its summary) and
// in the terminal summary.
func TestServerMemoryRisesToItsCap(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real engines")
	}
	testenv.Require(t, os.Geteuid() == 0, "root", testenv.HowRoot)
	testenv.RequireEngine(t, "postgres")
	if memlimit.SystemHost("/sys").Available() != nil {
		testenv.Require(t, false, "memory cgroups", testenv.HowRootAndMemcg)
	}
	target, base := faultDirs(t)
	// One warehouse is about 100 MB of tables, written through the page
	// cache while loading: more than the 96 MB the whole server may hold.
	const capBytes = 96 << 20
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"tpcc", "--engine", "postgres", "--target", target, "--results", base,
		"--warehouses", "1", "--users", "1", "--ramp-time", "1s", "--runtime", "3s", "--buffer-pool", "16MB", "--server-memory", "96MB"})
	if code != exitOK {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
	dir := runDir(base)
	if left := runGroups(dir); len(left) > 0 {
		t.Errorf("the run left its cgroups: %v", left)
	}
	l, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	capMB := float64(capBytes) / 1e6
	usage := l.Series.Column(results.MetricMemcgUsage)
	peak, seconds := 0.0, 0
	for _, row := range l.Series.Rows {
		if usage < 0 || usage >= len(row.Values) || math.IsNaN(row.Values[usage]) {
			continue
		}
		seconds++
		peak = max(peak, row.Values[usage])
		if row.Values[usage] > capMB {
			t.Errorf("a second at %.1f MB, over the %.1f MB cap", row.Values[usage], capMB)
		}
	}
	t.Logf("%d seconds sampled, peak %.1f MB under a %.1f MB cap", seconds, peak, capMB)
	if seconds == 0 || peak < 0.9*capMB {
		t.Errorf("peak %.1f MB over %d seconds: loading more than the cap should have filled the group to its %.1f MB", peak, seconds, capMB)
	}
	m, ok := analysis.StepServerMemory(l.Steps[0])
	if !ok || math.Abs(m.CapMB-capMB) > 0.01 || m.PeakMB < 0.9*capMB || m.CacheMB <= 0 || !m.Bound {
		t.Errorf("the step's server memory: %+v (%v)", m, ok)
	}
	if text := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(text, "server memory under its cap, MB") || !strings.Contains(text, "users-1 1 101 ") {
		t.Errorf("the terminal summary does not show the group at its cap:\n%s", out.String())
	}
}
