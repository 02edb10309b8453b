package runner

import (
	"context"
	"io"
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

func sqliteTenant(t *testing.T, name string, users int) tenant {
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
	return tenant{Name: name, Instance: inst, Workload: w, Users: users}
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
	b := &backupCycles{Backups: Backups{Cycles: 2, Restore: true}, Tenant: tenant, Dest: t.TempDir(),
		recording: recording{Tick: 100 * time.Millisecond, Dir: dir}}
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
	b := &backupCycles{Backups: Backups{Cycles: 1}, Tenant: tenant, Dest: t.TempDir(),
		recording: recording{Tick: 100 * time.Millisecond, Dir: resultsDir(t)}}
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
