package mysql

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"dbio/internal/engine"
)

// A pristine copy of a loaded database, restored twice after runs changed
// it, gives back the loaded rows each time, with the redo log on its own
// target.
func TestPristineCopyRestoresTheLoadedState(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	p := engine.Placement{Data: reachableTarget(t, "data"), Log: reachableTarget(t, "redo")}
	in := start(t, e, p, engine.Options{})
	db := in.DB()
	if _, err := db.Exec("CREATE TABLE loaded (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO loaded SELECT seq FROM seq_1_to_10000"); err != nil {
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
	// The copy's redo log is small; the server's is back to its size.
	redo := func(dir string) int64 {
		fi, err := os.Stat(filepath.Join(dir, "ib_logfile0"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	const configured = 1 << 30
	if n := redo(filepath.Join(dir, "log")); n != pristineRedo {
		t.Errorf("the copy's redo log has %d bytes, want %d", n, pristineRedo)
	}
	if kept.Bytes >= configured {
		t.Errorf("the copy holds %d bytes, more than the server's whole redo log", kept.Bytes)
	}
	if n := redo(in.managed.Layout.Log); n != configured {
		t.Errorf("after the copy the server's redo log has %d bytes, want its %d", n, configured)
	}
	for run := 1; run <= 2; run++ {
		// A run's changes: rows added and rows removed.
		if _, err := db.Exec("INSERT INTO loaded SELECT seq FROM seq_10001_to_10500; DELETE FROM loaded WHERE id <= 100"); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if _, err := in.RestorePristine(ctx, dir); err != nil {
			t.Fatalf("RestorePristine after run %d: %v", run, err)
		}
		if n := count(t, db, "SELECT count(*) FROM loaded"); n != 10000 {
			t.Errorf("after run %d and a reset: %d rows, want the 10000 loaded", run, n)
		}
		if n := count(t, db, "SELECT min(id) FROM loaded"); n != 1 {
			t.Errorf("after run %d and a reset: ids from %d, want 1", run, n)
		}
		if n := count(t, db, "SELECT @@innodb_log_file_size"); n != configured || redo(in.managed.Layout.Log) != configured {
			t.Errorf("after run %d and a reset: the redo log is set to %d bytes and has %d, want %d", run, n, redo(in.managed.Layout.Log), configured)
		}
	}
	select {
	case err := <-in.Exited():
		t.Errorf("Exited yielded %v after a reset", err)
	default:
	}
}
