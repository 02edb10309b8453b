package mysql

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// smallRedo keeps test instances quick to create; it also exercises a user
// setting replacing one of dbio's.
var smallRedo = map[string]string{"innodb_log_file_size": "48M"}

// reachableTarget opens a target in a fresh temporary directory that the
// server's unprivileged user can enter (t.TempDir is private to its creator).
func reachableTarget(t testing.TB, name string) *target.Target {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tg, err := target.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// realEngine returns the engine on the host, or skips when MariaDB is not installed.
func realEngine(t testing.TB) *Engine {
	t.Helper()
	e := New("mariadb", execx.Real{}, "/proc")
	_, err := e.findBinaries(context.Background())
	testenv.Require(t, err == nil, fmt.Sprintf("the MariaDB server (%v)", err), "install it with: "+testenv.InstallMariaDB)
	return e
}

func start(t *testing.T, e *Engine, p engine.Placement, o engine.Options) *Instance {
	t.Helper()
	began := time.Now()
	in, err := e.Start(context.Background(), p, o)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("started in %s", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() { in.Stop(context.Background()) })
	return in.(*Instance)
}

func stop(t *testing.T, in *Instance) {
	t.Helper()
	pid := in.ServerPID()
	began := time.Now()
	if err := in.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("stopped in %s", time.Since(began).Round(time.Millisecond))
	if !gone(pid, 0) {
		t.Errorf("server %d still exists after Stop", pid)
	}
	if err, ok := <-in.Exited(); ok || err != nil {
		t.Errorf("Exited after Stop yielded %v, want closed without a value", err)
	}
}

// gone waits up to d for a process to end; a zombie waiting to be reaped has ended.
func gone(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return true
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

func TestManagedLifecycle(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	data, redo := reachableTarget(t, "data"), reachableTarget(t, "redo")
	logDir := filepath.Join(t.TempDir(), "results")
	p := engine.Placement{Data: data, Log: redo}

	in := start(t, e, p, engine.Options{BufferPool: 64 << 20, Settings: smallRedo, LogDir: logDir})
	var db string
	var pool, logSize int64
	var flush int
	if err := in.DB().QueryRowContext(ctx, "SELECT DATABASE(), @@innodb_buffer_pool_size, @@innodb_log_file_size, @@innodb_flush_log_at_trx_commit").
		Scan(&db, &pool, &logSize, &flush); err != nil {
		t.Fatal(err)
	}
	if db != server.DefaultDatabase || pool != 64<<20 || logSize != 48<<20 || flush != 1 {
		t.Errorf("server has database %s, buffer pool %d, redo %d, flush_log_at_trx_commit %d; want %s, 64 MiB, 48 MiB, 1",
			db, pool, logSize, flush, server.DefaultDatabase)
	}
	// multiStatements is on in the DSN workloads get.
	if _, err := in.DB().ExecContext(ctx, "CREATE TABLE kept (id INT) ENGINE=InnoDB; INSERT INTO kept VALUES (1)"); err != nil {
		t.Fatal(err)
	}

	info := in.Info()
	if info.Engine != "mariadb" || !info.Managed || info.Transport != "socket" || info.Database != server.DefaultDatabase || !strings.Contains(info.Version, "MariaDB") {
		t.Errorf("Info = %+v", info)
	}
	// The data directory recorded is the one the server reports, which is dbio's.
	if info.DataDir != filepath.Join(data.Dir, "mariadb", "data") || !strings.HasPrefix(info.LogDir, redo.Dir) {
		t.Errorf("data in %s, redo in %s; want %s/mariadb/data and below %s", info.DataDir, info.LogDir, data.Dir, redo.Dir)
	}
	if dir, err := checkDataDir(ctx, in.StatsDB(), filepath.Join(data.Dir, "elsewhere")); err == nil || !strings.Contains(err.Error(), "the server reports its data directory as "+info.DataDir+", not ") {
		t.Errorf("checkDataDir against another directory = %s, %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(info.LogDir, redoFile)); err != nil {
		t.Errorf("no redo log on the log target: %v", err)
	}
	for name, want := range map[string]string{"innodb_buffer_pool_size": "64M", "innodb_log_file_size": "48M", "max_connections": "300"} {
		if got := info.Settings[name]; got != want {
			t.Errorf("Info.Settings[%s] = %q, want %q", name, got, want)
		}
	}
	if port, _ := strconv.Atoi(info.Settings["port"]); port == 0 || port == 3306 {
		t.Errorf("port %q: want a free port, never the system server's", info.Settings["port"])
	}

	stats, err := in.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range statusCounters {
		if _, ok := stats[k]; !ok {
			t.Errorf("Stats lacks %s: %v", k, stats)
		}
	}
	if stats["Innodb_buffer_pool_read_requests"] <= 0 || stats["Innodb_os_log_written"] <= 0 {
		t.Errorf("Stats = %v, want buffer pool requests and redo bytes counted", stats)
	}

	pids := in.PIDs()
	if len(pids) != 1 || pids[0] != in.ServerPID() {
		t.Errorf("PIDs = %v, want the server %d", pids, in.ServerPID())
	}
	if os.Geteuid() == 0 {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join("/proc", strconv.Itoa(pids[0])), &st); err == nil && st.Uid == 0 {
			t.Error("the server runs as root")
		}
	}
	if _, err := os.Stat(filepath.Join(data.Dir, "mariadb", "run", initFile)); err == nil {
		t.Error("the init file with the password is still there after the start")
	}
	stop(t, in)
	logged, _ := os.ReadFile(filepath.Join(logDir, "mariadb.log"))
	if !strings.Contains(string(logged), "Shutdown complete") {
		t.Errorf("server log in the results lacks a clean shutdown:\n%s", logged)
	}

	// An option that would move the instance onto another directory (a
	// stopped server's, say), or name a file outside dbio's directory, is
	// refused before anything is written there, whatever the preflight did.
	elsewhere := t.TempDir()
	for _, bad := range []map[string]string{{"datadir": elsewhere}, {"loose-datadir": elsewhere}, {"log_error": elsewhere + "/x.err"},
		{"innodb_data_home_dir": elsewhere}, {"plugin_load_add": "ha_connect.so"}} {
		if _, err := e.Start(ctx, p, engine.Options{Settings: bad}); err == nil {
			t.Errorf("Start with %v succeeded", bad)
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("a refused start wrote %d entries in %s", len(entries), elsewhere)
	}

	// An option the server rejects fails the start, quoting the server's log.
	_, err = e.Start(ctx, p, engine.Options{Settings: map[string]string{"innodb_log_file_size": "48M", "no_such_option": "1"}})
	if err == nil || !strings.Contains(err.Error(), "no_such_option") {
		t.Errorf("Start with a bad option = %v, want the server's complaint", err)
	}

	// The instance is reused, reached over TCP this time.
	in = start(t, e, p, engine.Options{Transport: "tcp", Settings: smallRedo})
	var n int
	if err := in.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM kept").Scan(&n); err != nil || n != 1 {
		t.Errorf("reused instance: count = %d, %v; want the table of the first start", n, err)
	}
	if in.Info().Transport != "tcp" || !strings.Contains(in.DSN(), "tcp(127.0.0.1:") {
		t.Errorf("transport %s, DSN %s; want tcp to 127.0.0.1", in.Info().Transport, in.DSN())
	}
	stop(t, in)

	// Fresh re-creates the instance: the table is gone.
	in = start(t, e, p, engine.Options{Fresh: true, Settings: smallRedo})
	if err := in.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM kept").Scan(&n); err == nil {
		t.Error("the table survived --fresh")
	}
	stop(t, in)
}

func TestExitedWhenKilledAndLockedDataDir(t *testing.T) {
	e := realEngine(t)
	p := engine.Placement{Data: reachableTarget(t, "data")}
	in := start(t, e, p, engine.Options{Settings: smallRedo})

	for _, fresh := range []bool{false, true} {
		_, err := e.Start(context.Background(), p, engine.Options{Fresh: fresh, Settings: smallRedo})
		if err == nil || !strings.Contains(err.Error(), "already running") {
			t.Errorf("Start (fresh=%v) on a running instance = %v, want a refusal", fresh, err)
		}
	}

	if err := syscall.Kill(in.ServerPID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-in.Exited():
		if err == nil || !strings.Contains(err.Error(), "exited unexpectedly") {
			t.Errorf("Exited yielded %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Exited did not fire within 10 s of killing the server")
	}
	if err := in.Stop(context.Background()); err != nil {
		t.Errorf("Stop after a crash: %v", err)
	}
	// The crashed instance recovers on the next start, its stale pid file notwithstanding.
	in = start(t, e, p, engine.Options{Settings: smallRedo})
	stop(t, in)
}

func TestPortConflictRetries(t *testing.T) {
	e := realEngine(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	calls := 0
	e.FreePort = func() (int, error) {
		calls++
		if calls == 1 {
			return busyPort, nil
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port, nil
	}
	// The target also holds the remains of an interrupted creation, which are replaced.
	data := reachableTarget(t, "data")
	base, err := data.Sub("mariadb")
	if err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(base, "data", "mysql", "junk")
	if err := os.MkdirAll(filepath.Dir(leftover), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leftover, []byte("half\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := start(t, e, engine.Placement{Data: data}, engine.Options{Settings: smallRedo})
	// Left at the engine's default, the buffer pool is still recorded, as the server reports it.
	if got := in.Info().Settings["innodb_buffer_pool_size"]; got != "128.0 MiB (engine default)" {
		t.Errorf("Info.Settings[innodb_buffer_pool_size] = %q, want the server's default, marked as such", got)
	}
	if calls < 2 || in.Info().Settings["port"] == strconv.Itoa(busyPort) {
		t.Errorf("port %s after %d choices; want a retry away from the busy port %d", in.Info().Settings["port"], calls, busyPort)
	}
	stop(t, in)
}

func TestExternalOwnership(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	server := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{Transport: "tcp", Settings: smallRedo})

	ext, err := e.Start(ctx, engine.Placement{}, engine.Options{DSN: server.DSN(), Database: "dbio_tpcc"})
	if err != nil {
		t.Fatal(err)
	}
	info := ext.Info()
	if info.Managed || info.Engine != "mariadb" || info.Database != "dbio_tpcc" || info.Transport != "tcp" || info.Settings["max_connections"] != "300" {
		t.Errorf("external Info = %+v", info)
	}
	// The server runs on this host: its processes are found by its port.
	if pids, want := ext.(engine.Processes).PIDs(), server.PIDs(); len(pids) == 0 || len(want) == 0 || pids[0] != want[0] {
		t.Errorf("the external server on this host reports processes %v, want %v", pids, want)
	}
	if _, err := ext.DB().ExecContext(ctx, "CREATE TABLE t (id INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := ext.(engine.StatsSource).Stats(ctx); err != nil {
		t.Errorf("external Stats: %v", err)
	}
	// The limit a run's pool is checked against: the server's own word,
	// the same as dbio's configuration of the server it manages, asked
	// before the run's database exists.
	if n, err := e.ExternalMaxConnections(ctx, engine.Options{DSN: server.DSN(), Database: "dbio_not_yet"}); err != nil || n != 300 {
		t.Errorf("ExternalMaxConnections = %d, %v; want 300", n, err)
	}
	if n, _ := e.MaxConnections(engine.Options{}); n != 300 {
		t.Errorf("MaxConnections of a managed server = %d, want 300", n)
	}
	ext.Stop(ctx)

	// Fresh on dbio's own database re-creates it.
	ext, err = e.Start(ctx, engine.Placement{}, engine.Options{DSN: server.DSN(), Database: "dbio_tpcc", Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ext.DB().ExecContext(ctx, "SELECT 1 FROM t"); err == nil {
		t.Error("table t survived --fresh")
	}
	ext.Stop(ctx)

	// A database dbio did not create is refused, fresh or not, and left alone.
	if _, err := server.DB().ExecContext(ctx, "CREATE DATABASE theirs; CREATE TABLE theirs.precious (id INT)"); err != nil {
		t.Fatal(err)
	}
	for _, fresh := range []bool{false, true} {
		_, err = e.Start(ctx, engine.Placement{}, engine.Options{DSN: server.DSN(), Database: "theirs", Fresh: fresh})
		if err == nil || !strings.Contains(err.Error(), `database "theirs"`) || !strings.Contains(err.Error(), "not created by dbio") {
			t.Errorf("Start on a foreign database (fresh=%v) = %v, want a refusal naming it", fresh, err)
		}
	}
	if _, err := server.DB().ExecContext(ctx, "SELECT 1 FROM theirs.precious"); err != nil {
		t.Errorf("the foreign database was touched: %v", err)
	}

	_, err = e.Start(ctx, engine.Placement{}, engine.Options{DSN: server.DSN(), Settings: map[string]string{"innodb_io_capacity": "1000"}})
	var managedOnly *engine.ManagedOnlyError
	if !errors.As(err, &managedOnly) || managedOnly.Option != engine.SettingOption || !strings.Contains(err.Error(), "--setting") {
		t.Errorf("external Start with settings = %v, want the refusal of --setting with --dsn", err)
	}
	_, err = e.Start(ctx, engine.Placement{}, engine.Options{DSN: "not a dsn"})
	if err == nil || !strings.Contains(err.Error(), "--dsn") {
		t.Errorf("external Start with a bad DSN = %v, want the accepted forms", err)
	}
	stop(t, server)
}

func TestUnreachableTargetSaysWhatToOpen(t *testing.T) {
	testenv.Require(t, os.Geteuid() == 0, "root (only a root dbio runs the server as another user)", testenv.HowRoot)
	e := realEngine(t)
	// t.TempDir's parent is private to root, so the server's user cannot enter it.
	tg, err := target.Create(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{})
	if err == nil || !strings.Contains(err.Error(), "chmod o+x") {
		t.Errorf("Start on an unreachable target = %v, want the directory to open up", err)
	}
}

func TestMissingBinariesSayHowToInstall(t *testing.T) {
	e := New("mariadb", &execx.Fake{}, "/proc")
	e.BinDirs = []string{t.TempDir()}
	_, err := e.Start(context.Background(), engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{})
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y mariadb-server") {
		t.Errorf("Start without binaries = %v, want the install command", err)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		out     string
		flavour flavour
		version string
	}{
		{"/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n", mariadb, "10.11.19"},
		{"/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)\n", mysql, "8.0.36"},
	}
	for _, tt := range tests {
		f, v, err := parseVersion(tt.out)
		if err != nil || f != tt.flavour || v != tt.version {
			t.Errorf("parseVersion(%q) = %s, %s, %v; want %s, %s", tt.out, f, v, err, tt.flavour, tt.version)
		}
	}
	if _, _, err := parseVersion("nonsense"); err == nil {
		t.Error("parseVersion accepted output without a version")
	}
}

func TestOptionFile(t *testing.T) {
	at := places{data: "/t/data", redo: "/l/redo", socket: "/t/run/mysqld.sock", pidFile: "/t/run/mysqld.pid", port: 4444}
	settings, err := settingNames.Apply(benchmarkSettings(mariadb, at, 300, 3<<30), map[string]string{"max-connections": "500", "skip-log-bin": ""}, engine.Confinement{Data: "/t"})
	if err != nil {
		t.Fatal(err)
	}
	want := `# Written by dbio at every start; edit the dbio flags, not this file.
[mysqld]
# dbio's own directory on the data target
datadir = /t/data
# dbio's own socket directory
socket = /t/run/mysqld.sock
pid-file = /t/run/mysqld.pid
# a free port, never the system server's
port = 4444
# reachable from this machine only
bind-address = 127.0.0.1
# no DNS lookup per connection
skip-name-resolve = ON
# set by the user
max-connections = 500
# room for multi-row inserts when loading
max_allowed_packet = 64M
# redo log on the log target
innodb_log_group_home_dir = /l/redo
# checkpoints not forced every few seconds by a small redo log (default 96M)
innodb_log_file_size = 1G
# --buffer-pool
innodb_buffer_pool_size = 3G
# set by the user
skip-log-bin
`
	if got, err := renderCnf(settings); got != want || err != nil {
		t.Errorf("renderCnf =\n%s, %v\nwant\n%s", got, err, want)
	}
	for _, bad := range []map[string]string{{"bad name": "1"}, {"x": "a\nb"}, {"datadir": "/srv/other"}, {"loose-datadir": "/t/dbio/x"},
		{"log_error": "/var/log/x.err"}, {"plugin_load_add": "ha_x.so"}, {"init_file": "/t/dbio/init.sql"}} {
		if _, err := settingNames.Apply(nil, bad, engine.Confinement{Data: "/t"}); err == nil {
			t.Errorf("settingNames.Apply(%v) accepted it", bad)
		}
	}
	// The last line of defence: a path of dbio's own (a target's) holding a
	// line break is not written into my.cnf, where it would start an option.
	if cnf, err := renderCnf([]server.Setting{{Name: "datadir", Value: "/t/A\ndatadir=/srv/B\n#/dbio/mariadb/data"}}); err == nil {
		t.Errorf("renderCnf wrote a line break into my.cnf:\n%s", cnf)
	}
	if got := cnfSize(1536 << 10); got != "1536K" {
		t.Errorf("cnfSize(1.5 MiB) = %s", got)
	}
}

// BenchmarkStartStop measures starting and cleanly stopping a reused instance
// with dbio's default settings; the time to create it is reported once as create-ms.
func BenchmarkStartStop(b *testing.B) {
	e := realEngine(b)
	ctx := context.Background()
	p := engine.Placement{Data: reachableTarget(b, "data")}
	began := time.Now()
	in, err := e.Start(ctx, p, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	created := time.Since(began)
	if err := in.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	var stopping time.Duration
	b.ResetTimer()
	for range b.N {
		in, err := e.Start(ctx, p, engine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		began := time.Now()
		if err := in.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		stopping += time.Since(began)
	}
	b.ReportMetric(float64(created.Milliseconds()), "create-ms")
	b.ReportMetric(float64(stopping.Milliseconds())/float64(b.N), "stop-ms")
}

func TestErrorLinesKeepsTheServersComplaint(t *testing.T) {
	out := "2026-11-22  0:11:56 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'no_such_option=1'\n" +
		"2026-11-22  0:11:56 0 [ERROR] Aborting\nInstalling MariaDB/MySQL system tables ...\n\nInstallation of system tables failed!\n"
	want := "2026-11-22  0:11:56 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'no_such_option=1'\n2026-11-22  0:11:56 0 [ERROR] Aborting"
	if got := errorLines(out); got != want {
		t.Errorf("errorLines =\n%s\nwant\n%s", got, want)
	}
}
