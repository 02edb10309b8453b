package mysql

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/engine"
)

// TestUndoGrowthStepIsTheServers starts MariaDB as dbio does, with and
// without --preallocate, and makes its undo logs outgrow ibdata1's free
// pages with one large transaction: the file grows by exactly the step the
// space estimate counts (64 MiB; 256 MiB with --preallocate), which is
// also the innodb_autoextend_increment the server reports.
func TestUndoGrowthStepIsTheServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	e := realEngine(t)
	for _, tc := range []struct {
		name        string
		preallocate int64
		stepMiB     uint64
	}{
		{"default", 0, 64},
		{"preallocate", 1 << 30, 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := engine.Options{Settings: smallRedo, Preallocate: tc.preallocate}
			var estimate uint64
			for _, f := range e.SpaceNeed(o, 0) {
				if strings.HasPrefix(f.What, undoGrowthWhat) {
					estimate = f.Bytes
				}
			}
			if estimate != tc.stepMiB<<20 {
				t.Fatalf("the estimate counts %d bytes of undo growth, want %d MiB", estimate, tc.stepMiB)
			}
			tg := reachableTarget(t, "data")
			in := start(t, e, engine.Placement{Data: tg}, o)
			ctx := context.Background()
			db := in.DB()
			var increment uint64
			if err := db.QueryRowContext(ctx, "SELECT @@innodb_autoextend_increment").Scan(&increment); err != nil {
				t.Fatal(err)
			}
			if increment<<20 != estimate {
				t.Errorf("the server's innodb_autoextend_increment is %d MiB, the estimate's step %d bytes", increment, estimate)
			}
			ibdata := findFile(t, tg.Path, "ibdata1")
			before := fileSize(t, ibdata)
			// 100,000 rows whose 200-byte column one UPDATE rewrites: the
			// transaction's undo holds every old value, about 25 MB, more
			// than the 12 MiB tablespace has free and less than one step.
			for _, q := range []string{
				"CREATE TABLE undo_growth (id INT PRIMARY KEY, c CHAR(200) NOT NULL) ENGINE = InnoDB",
				"INSERT INTO undo_growth SELECT seq, REPEAT('a', 200) FROM seq_1_to_100000",
				"UPDATE undo_growth SET c = REPEAT('b', 200)",
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			after := fileSize(t, ibdata)
			t.Logf("ibdata1: %d MiB before, %d MiB after the update", before>>20, after>>20)
			if after-before != estimate {
				t.Errorf("ibdata1 grew by %d bytes (%d to %d), want one step of %d", after-before, before, after, estimate)
			}
		})
	}
}

// findFile is the path of the one file called name under dir.
func findFile(t *testing.T, dir, name string) string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == name && d.Type().IsRegular() {
			found = append(found, path)
		}
		return nil
	})
	if err != nil || len(found) != 1 {
		t.Fatalf("%s under %s: %v, %v", name, dir, found, err)
	}
	return found[0]
}

func fileSize(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Size())
}
