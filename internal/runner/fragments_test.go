package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// A SQLite run's fragmentation counts its own database's files only: not
// a PostgreSQL instance dbio keeps on the same target, nor another SQLite
// database beside its own.
func TestFragmentationCountsOnlyTheRunsFiles(t *testing.T) {
	tg, err := target.Create(filepath.Join(t.TempDir(), "t"))
	if err != nil {
		t.Fatal(err)
	}
	// What earlier runs left: a kept PostgreSQL and another workload's database.
	kept := map[string]int{filepath.Join("postgres", "base-16384-1249"): 4 << 20, filepath.Join("sqlite", "sysbench.db"): 2 << 20}
	for rel, n := range kept {
		dir, err := tg.Sub(filepath.Dir(rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(rel)), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inst, err := sqlite.Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Database: "tpcc", Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(context.Background())
	if _, err := inst.DB().Exec("CREATE TABLE t (v BLOB); INSERT INTO t VALUES (zeroblob(100000))"); err != nil {
		t.Fatal(err)
	}
	rec, ok := fragmentation(engine.Placement{Data: tg}, inst, "start")
	testenv.Require(t, ok, "a filesystem that reports extents (FIEMAP)", "set TMPDIR to a directory on ext4 or xfs")
	if rec.Files == 0 {
		t.Fatal("no file counted")
	}
	for _, f := range rec.Largest {
		if !strings.HasPrefix(filepath.Base(f.Path), "tpcc.db") {
			t.Errorf("counted %s, which is not the run's database", f.Path)
		}
	}
	if rec.Bytes >= 2<<20 {
		t.Errorf("%d bytes counted: the kept instances' files are in the count", rec.Bytes)
	}
}
