package postgres

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

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

// realEngine returns the engine on the host, or skips when PostgreSQL is not installed.
func realEngine(t testing.TB) *Engine {
	t.Helper()
	e := New("postgres", execx.Real{}, "/proc")
	_, err := e.findBinaries(context.Background())
	testenv.Require(t, err == nil, fmt.Sprintf("the PostgreSQL server (%v)", err), "install it with: "+testenv.InstallPostgres)
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
		t.Errorf("postmaster %d still exists after Stop", pid)
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
	data, wal := reachableTarget(t, "data"), reachableTarget(t, "wal")
	logDir := filepath.Join(t.TempDir(), "results")
	p := engine.Placement{Data: data, Log: wal}

	in := start(t, e, p, engine.Options{BufferPool: 64 << 20, Settings: map[string]string{"work_mem": "8MB"}, LogDir: logDir})
	var db, sharedBuffers, workMem, fsync string
	if err := in.DB().QueryRowContext(ctx, "SELECT current_database(), current_setting('shared_buffers'), current_setting('work_mem'), current_setting('fsync')").
		Scan(&db, &sharedBuffers, &workMem, &fsync); err != nil {
		t.Fatal(err)
	}
	if db != server.DefaultDatabase || sharedBuffers != "64MB" || workMem != "8MB" || fsync != "on" {
		t.Errorf("server has database %s, shared_buffers %s, work_mem %s, fsync %s; want %s, 64MB, 8MB, on", db, sharedBuffers, workMem, fsync, server.DefaultDatabase)
	}
	if _, err := in.DB().ExecContext(ctx, "CREATE TABLE kept (id int); INSERT INTO kept VALUES (1)"); err != nil {
		t.Fatal(err)
	}

	info := in.Info()
	if info.Engine != "postgres" || !info.Managed || info.Transport != "socket" || info.Database != server.DefaultDatabase || info.Version == "" {
		t.Errorf("Info = %+v", info)
	}
	if info.DataDir != filepath.Join(data.Dir, "postgres", "data") || !strings.HasPrefix(info.LogDir, wal.Dir) {
		t.Errorf("data in %s, WAL in %s; want %s/postgres/data and below %s", info.DataDir, info.LogDir, data.Dir, wal.Dir)
	}
	// Every setting the server takes in its file is on the list the
	// preflight checks names against.
	known, err := e.listSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := in.DB().QueryContext(ctx, "SELECT name FROM pg_settings WHERE context <> 'internal' AND name NOT LIKE 'transaction\\_%'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if _, classified := settingClasses[strings.ToLower(name)]; known.Names[strings.ToLower(name)] == "" && !classified {
			t.Errorf("the server takes %s, which the list of its settings lacks: add it to developerSettings", name)
		}
	}
	rows.Close()
	for name, want := range map[string]string{"shared_buffers": "64MB", "work_mem": "8MB", "max_connections": "300", "initdb.locale": "C"} {
		if got := info.Settings[name]; got != want {
			t.Errorf("Info.Settings[%s] = %q, want %q", name, got, want)
		}
	}
	if port, _ := strconv.Atoi(info.Settings["port"]); port == 0 || port == 5432 {
		t.Errorf("port %q: want a free port, never the system server's", info.Settings["port"])
	}
	segments, _ := filepath.Glob(filepath.Join(info.LogDir, "0000*"))
	if len(segments) == 0 {
		t.Errorf("no WAL segments in %s", info.LogDir)
	}

	stats, err := in.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"blks_hit", "blks_read", "xact_commit", "xact_rollback", "checkpoints", "wal_bytes"} {
		if _, ok := stats[k]; !ok {
			t.Errorf("Stats lacks %s: %v", k, stats)
		}
	}
	if stats["xact_commit"] <= 0 || stats["wal_bytes"] <= 0 {
		t.Errorf("Stats = %v, want commits and WAL bytes counted", stats)
	}

	pids := in.PIDs()
	if len(pids) < 3 || pids[0] != in.ServerPID() {
		t.Errorf("PIDs = %v, want the postmaster %d first, then its children", pids, in.ServerPID())
	}
	if os.Geteuid() == 0 {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join("/proc", strconv.Itoa(pids[0])), &st); err == nil && st.Uid == 0 {
			t.Error("the server runs as root")
		}
	}
	stop(t, in)
	logged, _ := os.ReadFile(filepath.Join(logDir, "postgres.log"))
	if !strings.Contains(string(logged), "database system is shut down") {
		t.Errorf("server log in the results lacks a clean shutdown:\n%s", logged)
	}

	// A setting that would move the instance, or name a file outside
	// dbio's directory, is refused before anything is written, whatever
	// the preflight did.
	elsewhere := t.TempDir()
	for _, bad := range []map[string]string{{"data_directory": elsewhere}, {"log_directory": elsewhere}, {"archive_command": "true"}} {
		if _, err := e.Start(ctx, p, engine.Options{Settings: bad}); err == nil {
			t.Errorf("Start with %v succeeded", bad)
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("a refused start wrote %d entries in %s", len(entries), elsewhere)
	}

	// A setting the server rejects fails the start, quoting the server's log.
	_, err = e.Start(ctx, p, engine.Options{Settings: map[string]string{"no_such_parameter": "1"}})
	if err == nil || !strings.Contains(err.Error(), "no_such_parameter") {
		t.Errorf("Start with a bad setting = %v, want the server's complaint", err)
	}

	// The instance is reused, reached over TCP this time.
	in = start(t, e, p, engine.Options{Transport: "tcp"})
	var n int
	if err := in.DB().QueryRowContext(ctx, "SELECT count(*) FROM kept").Scan(&n); err != nil || n != 1 {
		t.Errorf("reused instance: count = %d, %v; want the table of the first start", n, err)
	}
	if in.Info().Transport != "tcp" || !strings.Contains(in.DSN(), "127.0.0.1") {
		t.Errorf("transport %s, DSN %s; want tcp to 127.0.0.1", in.Info().Transport, in.DSN())
	}
	stop(t, in)

	// Fresh re-creates the instance: the table is gone.
	in = start(t, e, p, engine.Options{Fresh: true})
	err = in.DB().QueryRowContext(ctx, "SELECT count(*) FROM kept").Scan(&n)
	if err == nil {
		t.Error("the table survived --fresh")
	}
	stop(t, in)
}

func TestExitedWhenKilledAndLockedDataDir(t *testing.T) {
	e := realEngine(t)
	p := engine.Placement{Data: reachableTarget(t, "data")}
	in := start(t, e, p, engine.Options{})

	_, err := e.Start(context.Background(), p, engine.Options{})
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second Start on a running instance = %v, want a refusal", err)
	}
	_, err = e.Start(context.Background(), p, engine.Options{Fresh: true})
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("Fresh Start on a running instance = %v, want a refusal", err)
	}

	pids := in.PIDs()
	if err := syscall.Kill(in.ServerPID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-in.Exited():
		if err == nil || !strings.Contains(err.Error(), "exited unexpectedly") {
			t.Errorf("Exited yielded %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Exited did not fire within 10 s of killing the postmaster")
	}
	if err := in.Stop(context.Background()); err != nil {
		t.Errorf("Stop after a crash: %v", err)
	}
	for _, pid := range pids {
		if !gone(pid, 5*time.Second) {
			t.Errorf("server process %d survived its postmaster", pid)
		}
	}
	// The crashed instance recovers on the next start.
	in = start(t, e, p, engine.Options{})
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
	base, err := data.Sub("postgres")
	if err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(base, "data", "PG_VERSION")
	if err := os.MkdirAll(filepath.Dir(leftover), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leftover, []byte("half\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := start(t, e, engine.Placement{Data: data}, engine.Options{})
	// Left at the engine's default, the buffer pool is still recorded, as the server reports it.
	if got := in.Info().Settings["shared_buffers"]; got != "128MB (engine default)" {
		t.Errorf("Info.Settings[shared_buffers] = %q, want the server's default, marked as such", got)
	}
	if calls < 2 || in.Info().Settings["port"] == strconv.Itoa(busyPort) {
		t.Errorf("port %s after %d choices; want a retry away from the busy port %d", in.Info().Settings["port"], calls, busyPort)
	}
	stop(t, in)
}

func TestExternalOwnership(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	server := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{Transport: "tcp"})

	ext, err := e.Start(ctx, engine.Placement{}, engine.Options{DSN: server.DSN(), Database: "dbio_tpcc"})
	if err != nil {
		t.Fatal(err)
	}
	info := ext.Info()
	if info.Managed || info.Database != "dbio_tpcc" || info.Transport != "tcp" || info.Settings["max_connections"] != "300" {
		t.Errorf("external Info = %+v", info)
	}
	// The server runs on this host: its postmaster is found by its port.
	if pids, want := ext.(engine.Processes).PIDs(), server.PIDs(); len(pids) == 0 || len(want) == 0 || pids[0] != want[0] {
		t.Errorf("the external server on this host reports processes %v, want %v", pids, want)
	}
	if _, err := ext.DB().ExecContext(ctx, "CREATE TABLE t (id int)"); err != nil {
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
	if _, err := server.DB().ExecContext(ctx, "CREATE DATABASE theirs"); err != nil {
		t.Fatal(err)
	}
	for _, fresh := range []bool{false, true} {
		_, err = e.Start(ctx, engine.Placement{}, engine.Options{DSN: server.DSN(), Database: "theirs", Fresh: fresh})
		if err == nil || !strings.Contains(err.Error(), `database "theirs"`) || !strings.Contains(err.Error(), "not created by dbio") {
			t.Errorf("Start on a foreign database (fresh=%v) = %v, want a refusal naming it", fresh, err)
		}
	}
	var exists bool
	if err := server.DB().QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'theirs')").Scan(&exists); err != nil || !exists {
		t.Errorf("the foreign database is gone (%v)", err)
	}

	_, err = e.Start(ctx, engine.Placement{}, engine.Options{DSN: server.DSN(), BufferPool: 1 << 30})
	if err == nil || !strings.Contains(err.Error(), "--buffer-pool") {
		t.Errorf("external Start with --buffer-pool = %v, want a refusal", err)
	}
	stop(t, server)
}

// TestExternalPasswordFromEnvironment starts an external instance whose DSN
// has no password, with PGPASSWORD given through Options.Getenv: the
// instance's own DSN, from which TPC-C opens its native pool, must carry it.
func TestExternalPasswordFromEnvironment(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	server := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{Transport: "tcp"})
	cfg, err := pgx.ParseConfig(server.DSN())
	if err != nil {
		t.Fatal(err)
	}
	keywords, err := withoutPassword(server.DSN())
	if err != nil {
		t.Fatal(err)
	}
	url := "postgres://" + cfg.User + "@127.0.0.1:" + strconv.Itoa(int(cfg.Port)) + "/postgres?sslmode=disable"
	getenv := func(k string) string {
		if k == PasswordEnv {
			return cfg.Password
		}
		return ""
	}
	for _, dsn := range []string{keywords, url} {
		ext, err := e.Start(ctx, engine.Placement{}, engine.Options{DSN: dsn, Database: "dbio_tpcc", Fresh: true, Getenv: getenv})
		if err != nil {
			t.Fatalf("%s with %s: %v", dsn, PasswordEnv, err)
		}
		conn, err := pgx.Connect(ctx, ext.DSN())
		if err != nil {
			t.Errorf("a native connection on the instance's DSN: %v", err)
		} else {
			conn.Close(ctx)
		}
		ext.Stop(ctx)
	}
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
	e := New("postgres", &execx.Fake{}, "/proc")
	e.BinDirs = []string{t.TempDir()}
	_, err := e.Start(context.Background(), engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{})
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y postgresql") {
		t.Errorf("Start without binaries = %v, want the install command", err)
	}
}

func TestBadTransport(t *testing.T) {
	_, err := New("postgres", &execx.Fake{}, "/proc").Start(context.Background(), engine.Placement{}, engine.Options{Transport: "udp"})
	if err == nil || !strings.Contains(err.Error(), "socket or tcp") {
		t.Errorf("Start with transport udp = %v", err)
	}
}

func TestMajorVersion(t *testing.T) {
	tests := map[string]string{
		"postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)\n": "15",
		"postgres (PostgreSQL) 17.2\n":                         "17",
		"postgres (PostgreSQL) 9.6.24\n":                       "9.6",
		"postgres (PostgreSQL) 18beta1\n":                      "18",
	}
	for out, want := range tests {
		if got, err := majorVersion(out); err != nil || got != want {
			t.Errorf("majorVersion(%q) = %q, %v; want %q", out, got, err, want)
		}
	}
	if _, err := majorVersion("something else"); err == nil {
		t.Error("majorVersion accepted output without a version")
	}
}

func TestDebianBinDirsNewestFirst(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9.6", "15", "16", "10"} {
		if err := os.MkdirAll(filepath.Join(root, v, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, d := range debianBinDirs(root) {
		got = append(got, filepath.Base(filepath.Dir(d)))
	}
	if want := []string{"16", "15", "10", "9.6"}; !slices.Equal(got, want) {
		t.Errorf("debianBinDirs = %v, want %v", got, want)
	}
}

func TestWithDatabase(t *testing.T) {
	tests := []struct{ dsn, want string }{
		{"postgres://u:p@db.example:5432/app?sslmode=require", "postgres://u:p@db.example:5432/app?sslmode=require&dbname=dbio_tpcc"},
		{"postgresql://u@h/app", "postgresql://u@h/app?dbname=dbio_tpcc"},
		{"host=/run/pg user=u dbname=app ", "host=/run/pg user=u dbname=app dbname='dbio_tpcc'"},
	}
	for _, tt := range tests {
		if got := withDatabase(tt.dsn, "dbio_tpcc"); got != tt.want {
			t.Errorf("withDatabase(%q) = %q, want %q", tt.dsn, got, tt.want)
		}
	}
}

func TestWithPassword(t *testing.T) {
	for _, dsn := range []string{"postgres://u@h:5432/app?sslmode=disable", "postgresql://u@h/app", "host=h user=u dbname=app"} {
		for _, pw := range []string{"S3cret", "a b+c&d=e'f\\g%h#i?j/k@l"} {
			got := withPassword(dsn, pw)
			cfg, err := pgx.ParseConfig(got)
			if err != nil {
				t.Fatalf("withPassword(%q, %q) = %q: %v", dsn, pw, got, err)
			}
			if cfg.Password != pw || cfg.User != "u" || cfg.Host != "h" {
				t.Errorf("withPassword(%q, %q) = %q reads as password %q, user %q, host %q", dsn, pw, got, cfg.Password, cfg.User, cfg.Host)
			}
		}
	}
}

func TestMalformedDSNErrorsDoNotQuoteIt(t *testing.T) {
	for _, bad := range []string{"host=h password=S3cret oops", "host=h password='S3cret"} {
		_, err := withoutPassword(bad)
		if err == nil || strings.Contains(err.Error(), "S3cret") {
			t.Errorf("withoutPassword(%q): %v", bad, err)
		}
	}
}

func TestSettingsFile(t *testing.T) {
	settings, err := settingNames.Apply(benchmarkSettings(5555, "/x/run", 300, 3<<30), map[string]string{"max_connections": "500", "log_line_prefix": `%m [%p] it's \n`}, engine.Confinement{Data: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	want := `# Written by dbio at every start; edit the dbio flags, not this file.
listen_addresses = '127.0.0.1'	# reachable from this machine only
port = '5555'	# a free port, never the system server's
unix_socket_directories = '/x/run'	# dbio's own socket directory
max_connections = '500'	# set by the user
max_wal_size = '4GB'	# checkpoints paced by checkpoint_timeout rather than forced by WAL volume
min_wal_size = '1GB'	# recycle WAL segments instead of creating new ones during a run
shared_buffers = '3GB'	# --buffer-pool
log_line_prefix = '%m [%p] it''s \\n'	# set by the user
`
	if got, err := renderConf(settings); got != want || err != nil {
		t.Errorf("renderConf =\n%s, %v\nwant\n%s", got, err, want)
	}
	for _, bad := range []map[string]string{{"bad name": "1"}, {"x": "a\nb"}, {"data_directory": "/srv/other"}, {"archive_command": "true"},
		{"log_directory": "/var/log"}, {"shared_preload_libraries": "pg_stat_statements"}} {
		if _, err := settingNames.Apply(nil, bad, engine.Confinement{Data: "/x"}); err == nil {
			t.Errorf("settingNames.Apply(%v) accepted it", bad)
		}
	}
	// The last line of defence: a path of dbio's own holding a line break
	// is not written into the configuration.
	if conf, err := renderConf([]server.Setting{{Name: "unix_socket_directories", Value: "/x/A\ndata_directory='/srv/B'"}}); err == nil {
		t.Errorf("renderConf wrote a line break:\n%s", conf)
	}
	if got := pgSize(1536 << 10); got != "1536kB" {
		t.Errorf("pgSize(1.5MB) = %s", got)
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
