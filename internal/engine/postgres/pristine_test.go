package postgres

import (
	"context"
	"path/filepath"
	"testing"

	"dbio/internal/engine"
)

// A pristine copy of a loaded database, restored twice after runs changed
// it, gives back the loaded rows each time, with the WAL on its own target.
func TestPristineCopyRestoresTheLoadedState(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	p := engine.Placement{Data: reachableTarget(t, "data"), Log: reachableTarget(t, "wal")}
	in := start(t, e, p, engine.Options{})
	db := in.DB()
	if _, err := db.Exec("CREATE TABLE loaded AS SELECT g AS id FROM generate_series(1, 10000) g"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(p.Data.Dir, "pristine-test")
	kept, err := in.KeepPristine(ctx, dir)
	if err != nil {
		t.Fatalf("KeepPristine: %v", err)
	}
	if kept.Method != engine.CopyBytes && kept.Method != engine.CopyReflink || kept.Bytes < 1<<20 {
		t.Errorf("KeepPristine = %+v, want a copy of the server's files", kept)
	}
	for run := 1; run <= 2; run++ {
		// A run's changes: rows added and rows removed.
		if _, err := db.Exec("INSERT INTO loaded SELECT g FROM generate_series(10001, 10500) g; DELETE FROM loaded WHERE id <= 100"); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if _, err := in.RestorePristine(ctx, dir); err != nil {
			t.Fatalf("RestorePristine after run %d: %v", run, err)
		}
		if n := count(t, db, "SELECT count(*) FROM loaded"); n != 10000 {
			t.Errorf("after run %d and a reset: %d rows, want the 10000 loaded", run, n)
		}
		if n := count(t, db, "SELECT max(id) FROM loaded"); n != 10000 {
			t.Errorf("after run %d and a reset: ids up to %d, want 10000", run, n)
		}
	}
	select {
	case err := <-in.Exited():
		t.Errorf("Exited yielded %v after a reset", err)
	default:
	}
}
