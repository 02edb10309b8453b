package mysql

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

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/target"
	"dbio/internal/testenv"
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
			if _, err := db.Exec("INSERT INTO "+table+" VALUES (?)", id); err != nil {
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

// haveBackupTool says whether mariadb-backup is installed.
func haveBackupTool(e *Engine) bool {
	for _, n := range []string{"mariadb-backup", "mariabackup"} {
		if _, err := server.Find(e.Runner, n, e.SearchDirs()...); err == nil {
			return true
		}
	}
	return false
}

// needBackupTool skips a test of physical backups where mariadb-backup is missing.
func needBackupTool(t testing.TB, e *Engine) {
	t.Helper()
	testenv.Require(t, haveBackupTool(e), "mariadb-backup", "install it with: "+testenv.InstallMariaDB)
}

func TestPhysicalBackupWhileWritingThenRestore(t *testing.T) {
	e := realEngine(t)
	needBackupTool(t, e)
	ctx := context.Background()
	p := engine.Placement{Data: reachableTarget(t, "data"), Log: reachableTarget(t, "redo")}
	in := start(t, e, p, engine.Options{Settings: smallRedo})
	db := in.DB()
	if _, err := db.Exec("CREATE TABLE fixed (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO fixed SELECT seq FROM seq_1_to_10000; CREATE TABLE log (id BIGINT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
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
	if err := checkPrepared(dst); err != nil {
		t.Errorf("the backup is not prepared: %v", err)
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
	if max := count(t, db, "SELECT COALESCE(MAX(id), 0) FROM log"); max != n {
		t.Errorf("log has %d rows but ids up to %d: the restored copy is not consistent", n, max)
	}
	if n < before || n > after+1 {
		t.Errorf("log has %d rows after the restore, want between %d (before the backup) and %d (after it)", n, before, after+1)
	}
	// The restored instance keeps its redo log on the log target, as the next start checks.
	if _, err := os.Stat(filepath.Join(in.Info().LogDir, redoFile)); err != nil {
		t.Errorf("no redo log on the log target after the restore: %v", err)
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
	in = start(t, e, p, engine.Options{Settings: smallRedo})
	if got := count(t, in.DB(), "SELECT count(*) FROM log"); got != n {
		t.Errorf("after a restart log has %d rows, want %d", got, n)
	}
	stop(t, in)
}

func TestLogicalRoundTripManagedAndExternal(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	in := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{Transport: "tcp", Settings: smallRedo})
	backups := reachableTarget(t, "backup").Dir

	// External mode reaches the same server through its DSN, with a password.
	ext, err := e.Start(ctx, engine.Placement{}, engine.Options{DSN: in.DSN(), Database: "dbio_ext"})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Stop(ctx)
	if !strings.Contains(in.DSN(), ":"+in.managed.password+"@") {
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
			if _, err := db.Exec("CREATE TABLE kept (id INT PRIMARY KEY, pad CHAR(32), KEY (pad)) ENGINE=InnoDB; INSERT INTO kept SELECT seq, MD5(seq) FROM seq_1_to_5000; CREATE PROCEDURE kept_count() SELECT COUNT(*) FROM kept"); err != nil {
				t.Fatal(err)
			}
			lb := tc.in.(engine.LogicalBackuper)
			res, err := lb.BackupLogical(ctx, filepath.Join(backups, tc.name))
			if err != nil {
				t.Fatalf("BackupLogical: %v", err)
			}
			if res.Tool != logicalTool || res.Bytes <= 0 || !strings.HasSuffix(res.Path, ".sql") {
				t.Errorf("BackupResult = %+v", res)
			}
			if _, err := db.Exec("DELETE FROM kept WHERE id > 100; DROP PROCEDURE kept_count; CREATE TABLE added (id INT)"); err != nil {
				t.Fatal(err)
			}
			if err := lb.RestoreLogical(ctx, filepath.Dir(res.Path)); err != nil {
				t.Fatalf("RestoreLogical: %v", err)
			}
			if n := count(t, db, "SELECT COUNT(*) FROM kept"); n != 5000 {
				t.Errorf("kept has %d rows after the restore, want 5000", n)
			}
			if n := count(t, db, "CALL kept_count()"); n != 5000 {
				t.Errorf("the restored procedure counts %d rows, want 5000", n)
			}
			if n := count(t, db, "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'kept' AND INDEX_NAME = 'pad'"); n != 1 {
				t.Errorf("kept has %d index columns named pad after the restore, want 1", n)
			}
			if n := count(t, db, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'added'"); n != 0 {
				t.Error("a table created after the backup survived the restore")
			}
			// The re-created database is still marked as dbio's.
			if n := count(t, db, "SELECT COUNT(*) FROM "+OwnerTable); n != 1 {
				t.Errorf("the owner marker has %d rows after the restore, want 1", n)
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
	needBackupTool(t, e)
	ctx := context.Background()
	in := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{Settings: smallRedo})
	pid := in.ServerPID()

	// An empty directory that neither the server's user nor an unprivileged dbio may write.
	locked := filepath.Join(reachableTarget(t, "backup").Dir, "locked")
	if err := os.Mkdir(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	_, err := in.Backup(ctx, locked)
	if err == nil || !strings.Contains(err.Error(), "mariadb-backup") || !strings.Contains(err.Error(), "must be able to write "+locked) {
		t.Errorf("Backup into a read-only directory = %v, want mariadb-backup's failure and what to do", err)
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
	if err := in.Restore(ctx, full); err == nil || !strings.Contains(err.Error(), "not a mariadb-backup backup") {
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

func TestClientGroup(t *testing.T) {
	tests := []struct {
		dsn  string
		want string
	}{
		{"dbio:pw@unix(/x/run/mysqld.sock)/", "\n[client]\nuser = \"dbio\"\npassword = \"pw\"\nsocket = \"/x/run/mysqld.sock\"\nprotocol = SOCKET\n"},
		{`u:p"w\@tcp(db.example:3307)/app?tls=true`, "\n[client]\nuser = \"u\"\npassword = \"p\\\"w\\\\\"\nhost = \"db.example\"\nport = 3307\nprotocol = TCP\nssl\nssl-verify-server-cert\n"},
		{"u@tcp(h)/", "\n[client]\nuser = \"u\"\nhost = \"h\"\nport = 3306\nprotocol = TCP\n"},
	}
	for _, tt := range tests {
		cfg, err := mysqldrv.ParseDSN(tt.dsn)
		if err != nil {
			t.Fatal(err)
		}
		if got := clientGroup(cfg); got != tt.want {
			t.Errorf("clientGroup(%s) =\n%s\nwant\n%s", tt.dsn, got, tt.want)
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
	needBackupTool(b, e)
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
		p.Data, o.Settings = reachableTarget(b, "data"), smallRedo
	}
	started, err := e.Start(ctx, p, o)
	if err != nil {
		b.Fatal(err)
	}
	in := started.(*Instance)
	defer in.Stop(ctx)
	db := in.DB()
	if *benchTarget == "" {
		if _, err := db.Exec(`CREATE TABLE stock (id INT PRIMARY KEY, qty INT NOT NULL, data VARCHAR(300) NOT NULL) ENGINE=InnoDB;
INSERT INTO stock SELECT seq, seq % 100, CONCAT(MD5(RAND()), MD5(RAND()), MD5(RAND()), MD5(RAND()),
  MD5(RAND()), MD5(RAND()), MD5(RAND()), MD5(RAND())) FROM seq_1_to_300000`); err != nil {
			b.Fatal(err)
		}
	}
	// The database's own files (one .ibd per table): InnoDB's statistics lag.
	size, err := server.TreeBytes(filepath.Join(in.Info().DataDir, in.Info().Database))
	if err != nil {
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
