package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"dbio/internal/engine"
)

func countRows(t *testing.T, inst *Instance, query string) int64 {
	t.Helper()
	var n int64
	if err := inst.DB().QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// A pristine copy of a loaded database, restored twice after runs changed
// it (their changes partly still in the WAL), gives back the loaded rows.
func TestPristineCopyRestoresTheLoadedState(t *testing.T) {
	ctx := context.Background()
	inst := start(t, engine.Options{Database: "reset"})
	db := inst.DB()
	if _, err := db.Exec("CREATE TABLE loaded (id INTEGER PRIMARY KEY); WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 10000) INSERT INTO loaded SELECT n FROM s"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(inst.Path()), "pristine-test")
	kept, err := inst.KeepPristine(ctx, dir)
	if err != nil {
		t.Fatalf("KeepPristine: %v", err)
	}
	fi, err := os.Stat(inst.Path())
	if err != nil {
		t.Fatal(err)
	}
	if kept.Method != engine.CopyBytes && kept.Method != engine.CopyReflink || kept.Bytes != fi.Size() {
		t.Errorf("KeepPristine = %+v, want a copy of the %d-byte database file", kept, fi.Size())
	}
	for run := 1; run <= 2; run++ {
		if _, err := db.Exec("WITH RECURSIVE s(n) AS (SELECT 10001 UNION ALL SELECT n + 1 FROM s WHERE n < 10500) INSERT INTO loaded SELECT n FROM s; DELETE FROM loaded WHERE id <= 100"); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if _, err := inst.RestorePristine(ctx, dir); err != nil {
			t.Fatalf("RestorePristine after run %d: %v", run, err)
		}
		if n := countRows(t, inst, "SELECT count(*) FROM loaded"); n != 10000 {
			t.Errorf("after run %d and a reset: %d rows, want the 10000 loaded", run, n)
		}
		if n := countRows(t, inst, "SELECT min(id) FROM loaded"); n != 1 {
			t.Errorf("after run %d and a reset: ids from %d, want 1", run, n)
		}
	}
}

// A restore with a connection in use is refused: the file under it would change.
func TestPristineRestoreRefusesConnectionsInUse(t *testing.T) {
	ctx := context.Background()
	inst := start(t, engine.Options{Database: "busy"})
	if _, err := inst.DB().Exec("CREATE TABLE t (id INTEGER)"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(inst.Path()), "pristine-test")
	if _, err := inst.KeepPristine(ctx, dir); err != nil {
		t.Fatal(err)
	}
	conn, err := inst.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := inst.RestorePristine(ctx, dir); err == nil {
		t.Error("RestorePristine with a connection in use: no error")
	}
}
