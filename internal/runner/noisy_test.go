package runner

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/mysql"
	"dbio/internal/engine/postgres"
	"dbio/internal/engine/sqlite"
	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/target"
)

// TestNoisyTenantsFitMemory: a noisy-neighbour run's tenants are judged by
// the memory each tenant's server needs as the engine counts it, so that a
// buffer pool sized with --setting is counted as the server will size it,
// and a refusal names the numbers and the fix. The engines' own memory
// needs are used as they are, without a server running.
func TestNoisyTenantsFitMemory(t *testing.T) {
	pg := postgres.New("postgres", execx.Real{}, "/proc")
	maria := mysql.New("mariadb", execx.Real{}, "/proc")
	const available = 4 << 30
	tests := []struct {
		name    string
		eng     engine.Engine
		opts    engine.Options
		tenants int
		// want is in the refusal; empty: the tenants fit.
		want []string
	}{
		{name: "postgres defaults fit", eng: pg, tenants: 2},
		{name: "postgres shared_buffers setting counted", eng: pg, tenants: 2,
			opts: engine.Options{Settings: map[string]string{"shared_buffers": "8GB"}},
			want: []string{"2 tenants need about", "of shared_buffers (setting)", "is available", "fewer tenants", "smaller --buffer-pool or buffer pool setting"}},
		{name: "postgres setting over a small --buffer-pool", eng: pg, tenants: 2,
			opts: engine.Options{BufferPool: 64 << 20, Settings: map[string]string{"shared_buffers": "3GB"}},
			want: []string{"of shared_buffers (setting)"}},
		{name: "postgres --buffer-pool counted", eng: pg, tenants: 2,
			opts: engine.Options{BufferPool: 3 << 30},
			want: []string{"2 tenants need about", "of shared_buffers +"}},
		{name: "mariadb innodb_buffer_pool_size setting counted", eng: maria, tenants: 3,
			opts: engine.Options{Settings: map[string]string{"innodb_buffer_pool_size": "2G"}},
			want: []string{"3 tenants need about", "(setting)", "fewer tenants"}},
		{name: "mariadb defaults fit", eng: maria, tenants: 3},
		{name: "an external server is not this host's memory", eng: pg, tenants: 2,
			opts: engine.Options{DSN: "postgres://u@db/x", Settings: map[string]string{"shared_buffers": "8GB"}}},
		{name: "sqlite's cache counted when given", eng: sqlite.Engine{}, tenants: 2,
			opts: engine.Options{BufferPool: 3 << 30},
			want: []string{"2 tenants need about", "of cache"}},
		{name: "sqlite without a cache size fits", eng: sqlite.Engine{}, tenants: 64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := errors.Join(tenantsMemoryProblems(tc.eng, tc.opts, 9, tc.tenants, available)...)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("not refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q does not say %q", err, w)
				}
			}
		})
	}
	// Memory not known: nothing to judge by.
	if err := errors.Join(tenantsMemoryProblems(pg, engine.Options{BufferPool: 64 << 30}, 9, 2, 0)...); err != nil {
		t.Errorf("refused with memory unknown: %v", err)
	}
}

// TestPreflightRefusesTenantsThatDoNotFit: the tenants' memory is judged by
// Preflight, which writes nothing, with each tenant's own users.
func TestPreflightRefusesTenantsThatDoNotFit(t *testing.T) {
	proc := t.TempDir()
	if err := os.WriteFile(filepath.Join(proc, "meminfo"), []byte("MemTotal: 8388608 kB\nMemAvailable: 4194304 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pg := postgres.New("postgres", execx.Real{}, "/proc")
	plan := Plan{Setup: Setup{Kind: "tpcc", Engine: pg, DataPath: t.TempDir(), ResultsBase: t.TempDir()},
		Body: Noisy{Tenants: 2, Users: 8, Quiet: time.Second}}
	sys := target.SysFS{Proc: proc, Sys: "/sys"}
	plan.EngineOptions = engine.Options{Settings: map[string]string{"shared_buffers": "8GB"}}
	err := Preflight(plan, sys)
	if !IsBadInput(err) || !strings.Contains(err.Error(), "2 tenants need about") || !strings.Contains(err.Error(), "4.0 GiB is available") {
		t.Fatalf("tenants of 8 GB each on a host with 4 GiB available: %v", err)
	}
	// A suite's preflight, before its first run, judges them the same way.
	suite := Suite{Name: "s", Results: t.TempDir(), Runs: []PlannedRun{{Name: "noisy", Kind: "tpcc", Plan: &plan}}}
	if err := suite.Preflight(sys); err == nil || !strings.Contains(err.Error(), "run noisy: 2 tenants need about") {
		t.Fatalf("a suite's tenants of 8 GB each on a host with 4 GiB available: %v", err)
	}
	plan.EngineOptions = engine.Options{}
	if err := Preflight(plan, sys); err != nil && strings.Contains(err.Error(), "tenants need") {
		t.Fatalf("tenants with default buffer pools refused: %v", err)
	}
	if err := suite.Preflight(sys); err != nil && strings.Contains(err.Error(), "tenants need") {
		t.Fatalf("a suite's tenants with default buffer pools refused: %v", err)
	}
}

func TestNoisyNeighbourOnSQLite(t *testing.T) {
	tenants := []tenant{sqliteTenant(t, "t1", 1), sqliteTenant(t, "t2", 1)}
	dests := []string{t.TempDir(), t.TempDir()}
	n := &noisyStudy{
		Noisy: Noisy{BackupTenants: 1, Interval: 500 * time.Millisecond, Cycles: 1, Quiet: time.Second},
		dbs:   tenants, BackupDest: func(i int) string { return dests[i] },
		recording: recording{Tick: 100 * time.Millisecond, Dir: resultsDir(t)},
	}
	steps, err := n.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// quiet: the working tenant and the aggregate (the backup tenant
	// idles); interference: the same tenant and the aggregate.
	if len(steps) != 4 {
		names := []string{}
		for _, s := range steps {
			names = append(names, s.Name)
		}
		t.Fatalf("steps %v", names)
	}
	if steps[3].Noisy == nil {
		t.Fatalf("step %s: no noisy-neighbour record", steps[3].Name)
	}
	d := *steps[3].Noisy
	if steps[0].Name != "quiet-t1" || steps[2].Name != "interference-t1" {
		t.Errorf("steps %s, %s: want the same working tenant in both phases", steps[0].Name, steps[2].Name)
	}
	if d.Phase != "interference" || len(d.Backups) != 1 || d.Backups[0].Bytes <= 0 || d.Backups[0].Error != "" {
		t.Fatalf("interference detail %+v", d)
	}
	if len(d.Tenants) != 1 || d.Tenants[0].TPM <= 0 {
		t.Fatalf("tenant figures %+v", d.Tenants)
	}
	if _, ok := steps[2].Figure("tpm_vs_quiet"); !ok {
		t.Error("no comparison with the quiet baseline")
	}
	if _, ok := steps[3].Figure(results.BackupSeconds(d.Backups[0].Tenant, 1)); !ok {
		t.Errorf("no figure of the backup in the phase: %+v", steps[3].Figures)
	}
	catalogued(t, steps)
}

func TestNoisyRefusesBadCounts(t *testing.T) {
	n := &noisyStudy{Noisy: Noisy{BackupTenants: 1}, dbs: []tenant{{Name: "a"}}}
	if _, err := n.Run(context.Background()); err == nil {
		t.Fatal("one tenant cannot also be the backup tenant")
	}
}

// TestNoisyPhasesAsSteps: each phase waits at the barrier before its load
// starts; its rows are in rampup, then measure, as a workload step's; with
// several working tenants, each second holds their throughput summed under
// the figures' own names; and each tenant's step keeps its histograms.
func TestNoisyPhasesAsSteps(t *testing.T) {
	tenants := []tenant{sqliteTenant(t, "t1", 1), sqliteTenant(t, "t2", 1), sqliteTenant(t, "t3", 1)}
	dests := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	dir := resultsDir(t)
	barriers := 0
	n := &noisyStudy{
		Noisy: Noisy{BackupTenants: 1, Interval: 500 * time.Millisecond, Cycles: 1, RampUp: 300 * time.Millisecond, Quiet: time.Second},
		dbs:   tenants, BackupDest: func(i int) string { return dests[i] },
		Barrier: func(context.Context) error { barriers++; return nil },
		// A quarter-second tick: with a tenth, a CI run with other
		// packages' tests beside this one once found a tick in which
		// neither working tenant committed anything (a stall of 100 ms),
		// which the check of the first measured second below cannot
		// tell from the drain it is there for.
		recording: recording{Tick: 250 * time.Millisecond, Dir: dir},
	}
	steps, err := n.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if barriers != 2 {
		t.Errorf("%d barriers, want one before each phase", barriers)
	}
	l, err := results.Load(dir.Path)
	if err != nil {
		t.Fatal(err)
	}
	total, t1, t2 := l.Series.Column("tpm"), l.Series.Column("t1_tpm"), l.Series.Column("t2_tpm")
	if total < 0 || t1 < 0 || t2 < 0 {
		t.Fatalf("columns %v: want tpm beside t1_tpm and t2_tpm", l.Series.Columns)
	}
	phases := map[string]int{}
	for i, r := range l.Series.Rows {
		phases[r.Phase]++
		// The first measured second holds a whole tick's transactions: the
		// tick that ends the ramp-up is drained before the counts are
		// reset, never after, which would leave it all but empty.
		if r.Phase == "measure" && (i == 0 || l.Series.Rows[i-1].Step != r.Step || l.Series.Rows[i-1].Phase == "rampup") && r.Values[total] <= 0 {
			t.Errorf("%s at %.1f s: the first measured second has tpm %v, want the tick's transactions", r.Step, r.ElapsedS, r.Values[total])
		}
		if sum := r.Values[t1] + r.Values[t2]; math.Abs(r.Values[total]-sum) > 1e-6*math.Max(1, sum) {
			t.Errorf("%s at %.1f s: tpm %v, the tenants' %v", r.Step, r.ElapsedS, r.Values[total], sum)
		}
	}
	if phases["rampup"] == 0 || phases["measure"] == 0 || len(phases) != 2 {
		t.Errorf("rows by phase %v: want rampup and measure only", phases)
	}
	hdrs, _ := filepath.Glob(filepath.Join(results.StepPath(dir.Path, steps[0].Index, steps[0].Name), "latency-*.hdr"))
	if len(hdrs) == 0 {
		t.Errorf("step %s keeps no latency histogram", steps[0].Name)
	}
}
