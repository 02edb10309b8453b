package postgres

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/target"
)

// writer inserts rows with ids 1, 2, 3... one transaction each until stopped,
// counting the commits that returned.
type writer struct {
	committed atomic.Int64
	stop      chan struct{}
	done      chan error
}

func startWriter(db *sql.DB, table string) *writer {
	w := &writer{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for id := int64(1); ; id++ {
			select {
			case <-w.stop:
				w.done <- nil
				return
			default:
			}
			if _, err := db.Exec("INSERT INTO "+table+" VALUES ($1)", id); err != nil {
				w.done <- err
				return
			}
			w.committed.Store(id)
		}
	}()
	return w
}

// waitFor waits until the writer has committed at least n rows.
func (w *writer) waitFor(t *testing.T, n int64) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); w.committed.Load() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the writer committed only %d rows in 30 s", w.committed.Load())
		}
	}
}

func (w *writer) finish(t *testing.T) {
	t.Helper()
	close(w.stop)
	if err := <-w.done; err != nil {
		t.Fatalf("writer: %v", err)
	}
}

func count(t *testing.T, db *sql.DB, query string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestPhysicalBackupWhileWritingThenRestore(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	p := engine.Placement{Data: reachableTarget(t, "data"), Log: reachableTarget(t, "wal")}
	in := start(t, e, p, engine.Options{})
	db := in.DB()
	if _, err := db.Exec("CREATE TABLE fixed AS SELECT g AS id FROM generate_series(1, 10000) g; CREATE TABLE log (id bigint PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}

	w := startWriter(db, "log")
	w.waitFor(t, 50)
	before := w.committed.Load()
	dst := filepath.Join(reachableTarget(t, "backup").Dir, "cycle-1")
	res, err := in.Backup(ctx, dst)
	if err != nil {
		w.finish(t)
		t.Fatalf("Backup: %v", err)
	}
	after := w.committed.Load()
	w.waitFor(t, after+20) // rows the restore must take away
	w.finish(t)
	t.Logf("backup of %d bytes while rows %d..%d were written", res.Bytes, before, after)
	if res.Path != dst || res.Tool != physicalTool || res.Bytes < 1<<20 {
		t.Errorf("BackupResult = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dst, "backup_label")); err != nil {
		t.Errorf("no backup_label in the backup: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dst, "dbio.conf")); err != nil {
		t.Errorf("the backup lacks dbio.conf: %v", err)
	}

	oldPID := in.ServerPID()
	if err := in.Restore(ctx, res.Path); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if in.ServerPID() == oldPID {
		t.Error("Restore did not restart the server")
	}
	// The pool's connections to the stopped server were replaced.
	if n := count(t, db, "SELECT count(*) FROM fixed"); n != 10000 {
		t.Errorf("fixed has %d rows after the restore, want 10000", n)
	}
	// The backup is one consistent moment between its start and its end:
	// every row committed before it began, none after it ended, no gap.
	n := count(t, db, "SELECT count(*) FROM log")
	if max := count(t, db, "SELECT coalesce(max(id), 0) FROM log"); max != n {
		t.Errorf("log has %d rows but ids up to %d: the restored copy is not consistent", n, max)
	}
	if n < before || n > after+1 {
		t.Errorf("log has %d rows after the restore, want between %d (before the backup) and %d (after it)", n, before, after+1)
	}
	// The restored instance keeps its WAL on the log target, as the next start checks.
	if link, err := os.Readlink(filepath.Join(in.Info().DataDir, "pg_wal")); err != nil || !strings.HasPrefix(link, p.Log.Dir) {
		t.Errorf("pg_wal after the restore: %q, %v; want a link to the log target", link, err)
	}
	for _, dir := range []string{filepath.Dir(in.Info().DataDir), filepath.Dir(in.Info().LogDir)} {
		if left, _ := filepath.Glob(filepath.Join(dir, "replaced-*")); len(left) != 0 {
			t.Errorf("replaced files left behind: %v", left)
		}
	}
	select {
	case err := <-in.Exited():
		t.Errorf("Exited yielded %v after a restore", err)
	default:
	}
	stop(t, in)

	// The restored instance starts again as it is, with the same rows.
	in = start(t, e, p, engine.Options{})
	if got := count(t, in.DB(), "SELECT count(*) FROM log"); got != n {
		t.Errorf("after a restart log has %d rows, want %d", got, n)
	}
	stop(t, in)
}

func TestLogicalRoundTripManagedAndExternal(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	in := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{Transport: "tcp"})
	backups := reachableTarget(t, "backup").Dir

	// External mode reaches the same server through its DSN, with a password.
	ext, err := e.Start(ctx, engine.Placement{}, engine.Options{DSN: in.DSN(), Database: "dbio_ext"})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Stop(ctx)
	if !strings.Contains(in.DSN(), "password=") {
		t.Fatalf("the TCP DSN %q has no password to hide", in.DSN())
	}
	if _, err := ext.(engine.Backuper).Backup(ctx, filepath.Join(backups, "ext-physical")); err == nil || !strings.Contains(err.Error(), "logical backup") {
		t.Errorf("physical Backup of an external server = %v, want a refusal pointing at the logical one", err)
	}

	for _, tc := range []struct {
		name string
		in   engine.Instance
	}{{"managed", in}, {"external", ext}} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.in.DB()
			if _, err := db.Exec("CREATE TABLE kept AS SELECT g AS id, md5(g::text) AS pad FROM generate_series(1, 5000) g; CREATE INDEX ON kept (pad)"); err != nil {
				t.Fatal(err)
			}
			lb := tc.in.(engine.LogicalBackuper)
			res, err := lb.BackupLogical(ctx, filepath.Join(backups, tc.name))
			if err != nil {
				t.Fatalf("BackupLogical: %v", err)
			}
			if res.Tool != logicalTool || res.Bytes <= 0 || !strings.HasSuffix(res.Path, ".dump") {
				t.Errorf("BackupResult = %+v", res)
			}
			if _, err := db.Exec("DELETE FROM kept WHERE id > 100; CREATE TABLE added (id int)"); err != nil {
				t.Fatal(err)
			}
			if err := lb.RestoreLogical(ctx, filepath.Dir(res.Path)); err != nil {
				t.Fatalf("RestoreLogical: %v", err)
			}
			if n := count(t, db, "SELECT count(*) FROM kept"); n != 5000 {
				t.Errorf("kept has %d rows after the restore, want 5000", n)
			}
			if n := count(t, db, "SELECT count(*) FROM pg_indexes WHERE tablename = 'kept'"); n != 1 {
				t.Errorf("kept has %d indexes after the restore, want 1", n)
			}
			if n := count(t, db, "SELECT count(*) FROM pg_tables WHERE tablename = 'added'"); n != 0 {
				t.Error("a table created after the backup survived the restore")
			}
			// The re-created database is still marked as dbio's.
			var comment string
			if err := db.QueryRow("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = current_database()").Scan(&comment); err != nil || comment != OwnerComment {
				t.Errorf("database comment after the restore = %q, %v", comment, err)
			}
			// A second backup into the same directory is refused, not overwritten.
			if _, err := lb.BackupLogical(ctx, filepath.Join(backups, tc.name)); err == nil || !strings.Contains(err.Error(), "not empty") {
				t.Errorf("BackupLogical into a used directory = %v, want a refusal", err)
			}
		})
	}
	stop(t, in)
}

func TestFailedBackupKeepsTheServerRunning(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	in := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{})
	pid := in.ServerPID()

	// An empty directory that neither the server's user nor an unprivileged dbio may write.
	locked := filepath.Join(reachableTarget(t, "backup").Dir, "locked")
	if err := os.Mkdir(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	_, err := in.Backup(ctx, locked)
	if err == nil || !strings.Contains(err.Error(), "pg_basebackup") || !strings.Contains(err.Error(), "must be able to write "+locked) {
		t.Errorf("Backup into a read-only directory = %v, want pg_basebackup's failure and what to do", err)
	}
	t.Logf("failed backup: %v", err)
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "theirs"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Backup(ctx, full); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Backup into a non-empty directory = %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(full, "theirs")); err != nil {
		t.Errorf("a file in the refused directory is gone: %v", err)
	}
	if err := in.Restore(ctx, full); err == nil || !strings.Contains(err.Error(), "not a PostgreSQL base backup") {
		t.Errorf("Restore from a directory that is no backup = %v", err)
	}
	if in.ServerPID() != pid {
		t.Error("the server was restarted by a failed backup")
	}
	if err := in.DB().PingContext(ctx); err != nil {
		t.Errorf("the server is unreachable after the failed backup: %v", err)
	}
	stop(t, in)
}

func TestWithoutPassword(t *testing.T) {
	tests := []struct{ dsn, want string }{
		{"postgres://u:secret@h:5432/app?sslmode=require", "postgres://u@h:5432/app?sslmode=require"},
		{"postgresql://h/app?password=secret&sslmode=disable", "postgresql://h/app?sslmode=disable"},
		{"host=/run/pg user=u password='it\\'s x' dbname=app", "host='/run/pg' user='u' dbname='app'"},
		{"host = h  password=secret port=5433", "host='h' port='5433'"},
	}
	for _, tt := range tests {
		if got, err := withoutPassword(tt.dsn); err != nil || got != tt.want {
			t.Errorf("withoutPassword(%q) = %q, %v; want %q", tt.dsn, got, err, tt.want)
		}
	}
	for _, bad := range []string{"host", "password='open"} {
		if _, err := withoutPassword(bad); err == nil {
			t.Errorf("withoutPassword(%q) accepted it", bad)
		}
	}
}

var (
	benchTarget   = flag.String("backup-target", "", "BenchmarkBackupRestore: back up the instance on this target (e.g. one `dbio tpcc --warehouses 1` loaded) instead of a synthetic 100 MB database")
	benchDatabase = flag.String("backup-database", "dbio_tpcc", "BenchmarkBackupRestore: the database to back up on -backup-target")
)

// BenchmarkBackupRestore times each backup method's backup and restore on
// one database: by default a synthetic one of about 100 MB (one TPC-C
// warehouse's size; its text is hexadecimal, which compresses better than
// TPC-C's), or the one on -backup-target. MiB/s are the backup's bytes over
// the time taken; the backups go to a temporary directory.
func BenchmarkBackupRestore(b *testing.B) {
	e := realEngine(b)
	ctx := context.Background()
	p := engine.Placement{}
	o := engine.Options{}
	if *benchTarget != "" {
		tg, err := target.Open(*benchTarget)
		if err != nil {
			b.Fatal(err)
		}
		p.Data, o.Database = tg, *benchDatabase
	} else {
		p.Data = reachableTarget(b, "data")
	}
	started, err := e.Start(ctx, p, o)
	if err != nil {
		b.Fatal(err)
	}
	in := started.(*Instance)
	defer in.Stop(ctx)
	db := in.DB()
	if *benchTarget == "" {
		if _, err := db.Exec(`CREATE TABLE stock AS SELECT g AS id, g % 100 AS qty,
  md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text) ||
  md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text) AS data
FROM generate_series(1, 300000) g; ALTER TABLE stock ADD PRIMARY KEY (id); CHECKPOINT`); err != nil {
			b.Fatal(err)
		}
	}
	var size int64
	if err := db.QueryRow("SELECT pg_database_size(current_database())").Scan(&size); err != nil {
		b.Fatal(err)
	}
	backups := reachableTarget(b, "backup").Dir
	methods := []struct {
		name    string
		backup  func(context.Context, string) (engine.BackupResult, error)
		restore func(context.Context, string) error
	}{
		{"physical", in.Backup, in.Restore},
		{"logical", in.BackupLogical, in.RestoreLogical},
	}
	type total struct {
		backup, restore time.Duration
		bytes           int64
	}
	totals := make([]total, len(methods))
	b.ResetTimer()
	for i := range b.N {
		for mi, m := range methods {
			dst := filepath.Join(backups, fmt.Sprintf("%s-%d", m.name, i))
			began := time.Now()
			res, err := m.backup(ctx, dst)
			if err != nil {
				b.Fatal(err)
			}
			backedUp := time.Since(began)
			began = time.Now()
			if err := m.restore(ctx, res.Path); err != nil {
				b.Fatal(err)
			}
			restored := time.Since(began)
			os.RemoveAll(dst)
			totals[mi].backup += backedUp
			totals[mi].restore += restored
			totals[mi].bytes += res.Bytes
			b.Logf("%s (%s) of a %.1f MiB database: %.1f MiB backed up in %s (%.1f MiB/s), restored in %s (%.1f MiB/s)",
				m.name, res.Tool, mib(size), mib(res.Bytes), backedUp.Round(time.Millisecond), mib(res.Bytes)/backedUp.Seconds(),
				restored.Round(time.Millisecond), mib(res.Bytes)/restored.Seconds())
		}
	}
	b.ReportMetric(mib(size), "db-MiB")
	for mi, m := range methods {
		tt := totals[mi]
		b.ReportMetric(tt.backup.Seconds()/float64(b.N), m.name+"-backup-s")
		b.ReportMetric(mib(tt.bytes)/tt.backup.Seconds(), m.name+"-backup-MiB/s")
		b.ReportMetric(tt.restore.Seconds()/float64(b.N), m.name+"-restore-s")
		b.ReportMetric(mib(tt.bytes)/tt.restore.Seconds(), m.name+"-restore-MiB/s")
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
