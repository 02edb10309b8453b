package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/engine/mysql"
	"dbio/internal/engine/postgres"
	"dbio/internal/engine/sqlite"
	"dbio/internal/execx"
	"dbio/internal/target"
)

// The space a fresh database needs: the workload's data, and each engine's
// own files where it puts them, in the sizes dbio's managed configuration
// (or the user's setting) gives them.
func TestDatabaseNeeds(t *testing.T) {
	root := t.TempDir()
	data, log := filepath.Join(root, "data"), filepath.Join(root, "log")
	const gb, mb = 1 << 30, 1 << 20
	type want struct {
		path  string
		bytes uint64
		what  string
	}
	mariadb, mysqlEngine := mysql.New("mariadb", execx.Real{}, "/proc"), mysql.New("mysql", execx.Real{}, "/proc")
	pg := postgres.New("postgres", execx.Real{}, "/proc")
	for _, tt := range []struct {
		name    string
		e       engine.Engine
		o       engine.Options
		data    uint64
		log     string
		servers int
		want    []want
	}{
		{"sqlite: the data only", sqlite.Engine{}, engine.Options{}, 225 * mb, "", 1,
			[]want{{data, 225 * mb, "tpcc at this scale"}}},
		{"mariadb: the 1 GB redo log dbio configures, beside the data", mariadb, engine.Options{}, 225 * mb, "", 1,
			[]want{{data, 225 * mb, "tpcc at this scale (225.0 MiB)"}, {data, gb, "MariaDB's redo log (innodb_log_file_size, as dbio sets it) (1.0 GiB)"},
				{data, 32 * mb, "InnoDB's system and temporary tablespaces and the system schemas (32.0 MiB)"},
				{data, 64 * mb, "ibdata1's growth with the undo logs (one innodb_autoextend_increment step, 64M by default) (64.0 MiB)"}}},
		{"mariadb with a log target: the redo log there", mariadb, engine.Options{}, 225 * mb, log, 1,
			[]want{{data, 225 * mb, ""}, {log, gb, ""}, {data, 32 * mb, ""}, {data, 64 * mb, ""}}},
		{"mariadb with the redo log set smaller", mariadb, engine.Options{Settings: map[string]string{"innodb-log-file-size": "48M"}}, 225 * mb, "", 1,
			[]want{{data, 225 * mb, ""}, {data, 48 * mb, "the redo log (innodb_log_file_size setting) (48.0 MiB)"}, {data, 32 * mb, ""}, {data, 64 * mb, ""}}},
		{"mariadb preallocating: ibdata1 grows 256 MB at a time", mariadb, engine.Options{Preallocate: engine.PreallocateAuto}, 225 * mb, "", 1,
			[]want{{data, 225 * mb, ""}, {data, gb, ""}, {data, 32 * mb, ""},
				{data, 256 * mb, "ibdata1's growth with the undo logs (one innodb_autoextend_increment step, 256M with --preallocate) (256.0 MiB)"}}},
		{"mariadb with the autoextend step set", mariadb, engine.Options{Settings: map[string]string{"innodb-autoextend-increment": "8"}}, 225 * mb, "", 1,
			[]want{{data, 225 * mb, ""}, {data, gb, ""}, {data, 32 * mb, ""}, {data, 8 * mb, "ibdata1's growth with the undo logs (one innodb_autoextend_increment step, 8M as set) (8.0 MiB)"}}},
		{"mysql: its default redo capacity, its undo in tablespaces of its own", mysqlEngine, engine.Options{}, 225 * mb, "", 1,
			[]want{{data, 225 * mb, ""}, {data, 100 * mb, ""}, {data, 32 * mb, ""}}},
		{"three mariadb tenants: three redo logs", mariadb, engine.Options{}, 675 * mb, "", 3,
			[]want{{data, 675 * mb, ""}, {data, 3 * gb, "MariaDB's redo log (innodb_log_file_size, as dbio sets it) (3 servers, 3.0 GiB)"}, {data, 96 * mb, ""}, {data, 3 * 64 * mb, ""}}},
		{"postgres: WAL about as large as a small dataset", pg, engine.Options{}, 225 * mb, log, 1,
			[]want{{data, 225 * mb, ""}, {data, 25 * mb, ""}, {log, 225 * mb, ""}}},
		{"postgres: WAL kept up to min_wal_size", pg, engine.Options{}, 4 * gb, "", 1,
			[]want{{data, 4 * gb, ""}, {data, 25 * mb, ""}, {data, gb, ""}}},
		{"postgres: min_wal_size set in megabytes", pg, engine.Options{Settings: map[string]string{"min_wal_size": "80"}}, 4 * gb, "", 1,
			[]want{{data, 4 * gb, ""}, {data, 25 * mb, ""}, {data, 80 * mb, "WAL kept between checkpoints (about as much as the data, at most the min_wal_size setting) (80.0 MiB)"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := databaseNeeds(tt.e, tt.o, tt.data, data, tt.log, "tpcc at this scale", tt.servers)
			show := func(ns []target.Need) string {
				var b strings.Builder
				for _, n := range ns {
					fmt.Fprintf(&b, "\n  %s %d %q", n.Path, n.Bytes, n.What)
				}
				return b.String()
			}
			if len(got) != len(tt.want) {
				t.Fatalf("needs:%s", show(got))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Path != w.path || g.Bytes != w.bytes || (w.what != "" && g.What != w.what) {
					t.Errorf("need %d = %s %d %q, want %s %d %q", i, g.Path, g.Bytes, g.What, w.path, w.bytes, w.what)
				}
			}
		})
	}
}

// A fresh MariaDB instance replaces the redo log an earlier one of dbio's
// keeps on the log target: that space counts as free there, once.
func TestDatabaseNeedsReclaimsTheOldRedoLog(t *testing.T) {
	log, err := target.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	redo, err := log.Sub("mariadb-redo")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(redo, "ib_logfile0"), make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	needs := databaseNeeds(mysql.New("mariadb", execx.Real{}, "/proc"), engine.Options{}, 100<<20, t.TempDir(), log.Path, "tpcc at this scale", 1)
	var reclaimed uint64
	for _, n := range needs {
		if n.Path == log.Path {
			reclaimed += n.Reclaim
		}
	}
	if reclaimed < 4<<20 || reclaimed > 5<<20 {
		t.Errorf("the log target reclaims %d bytes, want the old redo log's 4 MiB: %+v", reclaimed, needs)
	}
}
