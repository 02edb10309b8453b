package scenario

import (
	"context"
	"io"
	"math"
	"path/filepath"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/workload"
	"dbio/internal/workload/tpcc"
)

func sqliteTenant(t *testing.T, name string, users int) Tenant {
	t.Helper()
	tg, err := target.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := sqlite.Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Database: "tpcc", Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	w := tpcc.New(tpcc.Config{Warehouses: 1, Loading: workload.Loading{Seed: 3}})
	if _, err := w.Prepare(context.Background(), inst, io.Discard); err != nil {
		t.Fatal(err)
	}
	return Tenant{Name: name, Instance: inst, Workload: w, Users: users}
}

func resultsDir(t *testing.T) *results.Dir {
	t.Helper()
	d, err := results.Create(t.TempDir(), "scenario", results.Run{Kind: "test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBackupCyclesWithRestore(t *testing.T) {
	tenant := sqliteTenant(t, "db", 0)
	dir := resultsDir(t)
	b := &Backups{Tenant: tenant, Dest: t.TempDir(), Cycles: 2, Restore: true, Recording: Recording{Tick: 100 * time.Millisecond, Dir: dir}}
	steps, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 {
		t.Fatalf("%d steps, want backup and restore for 2 cycles", len(steps))
	}
	catalogued(t, steps)
	for _, s := range steps {
		if s.Backup == nil {
			t.Fatalf("%s: no backup record", s.Name)
		}
		d := *s.Backup
		if s.Status != results.StatusCompleted || d.Bytes < 50e6 || d.Seconds <= 0 {
			t.Errorf("%s: status %s, %d bytes in %.2f s", s.Name, s.Status, d.Bytes, d.Seconds)
		}
		if d.Op == "restore" {
			if d.Verified == nil || !*d.Verified || len(d.Checks) < 4+9 {
				t.Errorf("%s not verified: %+v", s.Name, d.Checks)
			}
		}
	}
	l, err := results.Load(dir.Path)
	if err != nil || len(l.Steps) != 4 || l.Series.Column("backup_mb_per_s") < 0 {
		t.Fatalf("results: %v, %d steps, columns %v", err, len(l.Steps), l.Series.Columns)
	}
}

func TestBackupWhileWorkloadRuns(t *testing.T) {
	tenant := sqliteTenant(t, "db", 2)
	b := &Backups{Tenant: tenant, Dest: t.TempDir(), Cycles: 1, Recording: Recording{Tick: 100 * time.Millisecond, Dir: resultsDir(t)}}
	steps, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tpm, ok := steps[0].Figure("tpm"); !ok || tpm <= 0 {
		t.Errorf("no workload figures during the backup: %+v", steps[0].Figures)
	}
	catalogued(t, steps)
}

// catalogued fails the test for a step figure the catalogue does not define.
func catalogued(t *testing.T, steps []results.Step) {
	t.Helper()
	for _, s := range steps {
		if err := results.CheckFigures(results.InStep, s.Figures...); err != nil {
			t.Errorf("step %s: %v", s.Name, err)
		}
	}
}

func TestNoisyNeighbourOnSQLite(t *testing.T) {
	tenants := []Tenant{sqliteTenant(t, "t1", 1), sqliteTenant(t, "t2", 1)}
	dests := []string{t.TempDir(), t.TempDir()}
	n := &Noisy{
		Tenants: tenants, BackupTenants: 1, Interval: 500 * time.Millisecond, Cycles: 1,
		Quiet: time.Second, BackupDest: func(i int) string { return dests[i] },
		Recording: Recording{Tick: 100 * time.Millisecond, Dir: resultsDir(t)},
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
	n := &Noisy{Tenants: []Tenant{{Name: "a"}}, BackupTenants: 1}
	if _, err := n.Run(context.Background()); err == nil {
		t.Fatal("one tenant cannot also be the backup tenant")
	}
}

// TestNoisyPhasesAsSteps: each phase waits at the barrier before its load
// starts; its rows are in rampup, then measure, as a workload step's; with
// several working tenants, each second holds their throughput summed under
// the figures' own names; and each tenant's step keeps its histograms.
func TestNoisyPhasesAsSteps(t *testing.T) {
	tenants := []Tenant{sqliteTenant(t, "t1", 1), sqliteTenant(t, "t2", 1), sqliteTenant(t, "t3", 1)}
	dests := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	dir := resultsDir(t)
	barriers := 0
	n := &Noisy{
		Tenants: tenants, BackupTenants: 1, Interval: 500 * time.Millisecond, Cycles: 1,
		RampUp: 300 * time.Millisecond, Quiet: time.Second, BackupDest: func(i int) string { return dests[i] },
		Barrier:   func(context.Context) error { barriers++; return nil },
		Recording: Recording{Tick: 100 * time.Millisecond, Dir: dir},
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
