package tpcc

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/engine/mysql"
	"dbio/internal/engine/postgres"
	"dbio/internal/execx"
	"dbio/internal/target"
	"dbio/internal/testenv"
	"dbio/internal/workload"
)

// testEngine is one engine the TPC-C tests run on. SQLite runs on copies of
// a loaded file; PostgreSQL and MariaDB on one server each, started for the
// test binary, where every dataset is a database of its own.
type testEngine struct {
	name string
	// ph renders bind parameter n in the engine's SQL.
	ph func(n int) string
	// loaded gives a test an instance on a database of w warehouses. Tests
	// may change it but must leave it consistent: server engines share it.
	loaded func(t testing.TB, w int) (*Workload, engine.Instance)
	// own gives a test a database of w warehouses that no other test
	// changes while it runs: a copy of the loaded file for SQLite, a load
	// of its own on a server.
	own func(t testing.TB, w int) (*Workload, engine.Instance)
	// empty gives a test an instance on an empty database of its own.
	empty func(t testing.TB) engine.Instance
	// managed is the engine and options for a server of the test's own
	// (nil for SQLite, which has no server).
	managed func() (engine.Engine, engine.Options)
}

// forEachEngine runs body once per engine, the engines in parallel: their
// servers wait on the disk at different times. An engine whose server is
// not installed is skipped, or fails under CI (testenv.RequireEngine).
func forEachEngine(t *testing.T, body func(t *testing.T, e testEngine)) {
	for _, e := range testEngines() {
		t.Run(e.name, func(t *testing.T) {
			testenv.RequireEngine(t, e.name)
			t.Parallel()
			body(t, e)
		})
	}
}

func testEngines() []testEngine {
	sqliteEngine := testEngine{
		name:   "sqlite",
		loaded: loadedSQLite,
		own:    loadedSQLite,
		empty:  func(t testing.TB) engine.Instance { return openSQLite(t) },
	}
	// The servers start on first use, after testenv.RequireEngine has
	// checked that their programs are installed.
	pg := testEngine{name: "postgres", ph: func(n int) string { return "$" + strconv.Itoa(n) },
		loaded: pgServer.loaded, own: pgServer.own, empty: pgServer.empty, managed: pgServer.managedOptions}
	maria := testEngine{name: "mariadb", loaded: mariaServer.loaded, own: mariaServer.own, empty: mariaServer.empty, managed: mariaServer.managedOptions}
	return []testEngine{sqliteEngine, pg, maria}
}

// testServer is a managed server shared by the tests of this binary.
type testServer struct {
	engine  engine.Engine
	options engine.Options

	start    func() (engine.Instance, error)
	datasets sync.Map // warehouses -> func() (string, error), the database's name
	seq      int
	mu       sync.Mutex
}

var (
	pgServer = newTestServer(postgres.New("postgres", execx.Real{}, "/proc"), engine.Options{Database: "dbio_test", BufferPool: 256 << 20})
	// A small redo log makes the instance quick to create.
	mariaServer = newTestServer(mysql.New("mariadb", execx.Real{}, "/proc"), engine.Options{Database: "dbio_test", BufferPool: 256 << 20,
		Settings: map[string]string{"innodb_log_file_size": "96M"}})
	// mariaLockServer serves TestMariaDBLocking alone, whose checks wait on
	// row locks and must not wait on anything else: on the shared server,
	// with the package's loads filling its 96 MB redo log and 256 MB pool,
	// CI once saw a Delivery run for a minute ("Updating", not waiting on
	// a lock) where it takes a tenth of a second.
	mariaLockServer = newTestServerIn("mariadb-locks", mysql.New("mariadb", execx.Real{}, "/proc"), engine.Options{Database: "dbio_test",
		BufferPool: 256 << 20, Settings: map[string]string{"innodb_log_file_size": "96M"}})
)

func newTestServer(e engine.Engine, o engine.Options) *testServer {
	return newTestServerIn(e.Name(), e, o)
}

// newTestServerIn is a shared server whose files go to dir under the
// package's template root.
func newTestServerIn(dir string, e engine.Engine, o engine.Options) *testServer {
	s := &testServer{engine: e, options: o}
	s.start = sync.OnceValues(func() (engine.Instance, error) {
		tg, err := target.Create(filepath.Join(templateRoot, dir))
		if err != nil {
			return nil, err
		}
		opts := o
		opts.Fresh = true
		inst, err := e.Start(context.Background(), engine.Placement{Data: tg}, opts)
		if err == nil {
			startedMu.Lock()
			startedServers = append(startedServers, inst)
			startedMu.Unlock()
		}
		return inst, err
	})
	return s
}

// startedServers are stopped by TestMain.
var (
	startedMu      sync.Mutex
	startedServers []engine.Instance
)

func (s *testServer) managedOptions() (engine.Engine, engine.Options) {
	o := s.options
	o.Fresh = true
	return s.engine, o
}

// database opens an instance (external mode) on database name of the shared server.
func (s *testServer) database(name string, fresh bool) (engine.Instance, error) {
	srv, err := s.start()
	if err != nil {
		return nil, fmt.Errorf("start the shared %s server: %w", s.engine.Name(), err)
	}
	return s.engine.Start(context.Background(), engine.Placement{}, engine.Options{DSN: srv.DSN(), Database: name, Fresh: fresh})
}

func (s *testServer) loaded(t testing.TB, warehouses int) (*Workload, engine.Instance) {
	t.Helper()
	f, _ := s.datasets.LoadOrStore(warehouses, sync.OnceValues(func() (string, error) {
		name := fmt.Sprintf("tpcc_w%d", warehouses)
		inst, err := s.database(name, true)
		if err != nil {
			return "", err
		}
		defer inst.Stop(context.Background())
		_, err = New(Config{Warehouses: warehouses, Loading: workload.Loading{Seed: 1}}).Prepare(context.Background(), inst, io.Discard)
		return name, err
	}))
	name, err := f.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := s.database(name, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	w := New(Config{Warehouses: warehouses, Loading: workload.Loading{Seed: 1, Reuse: true}})
	st, err := w.Prepare(context.Background(), inst, io.Discard)
	if err != nil || !st.Reused {
		t.Fatalf("reuse the loaded database: %+v %v", st, err)
	}
	return w, inst
}

func (s *testServer) own(t testing.TB, warehouses int) (*Workload, engine.Instance) {
	t.Helper()
	inst := s.empty(t)
	w := New(Config{Warehouses: warehouses, Loading: workload.Loading{Seed: 1}})
	if _, err := w.Prepare(context.Background(), inst, io.Discard); err != nil {
		t.Fatal(err)
	}
	return w, inst
}

func (s *testServer) empty(t testing.TB) engine.Instance {
	t.Helper()
	s.mu.Lock()
	s.seq++
	name := fmt.Sprintf("tpcc_empty%d", s.seq)
	s.mu.Unlock()
	inst, err := s.database(name, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	return inst
}

// reachableDir makes a temporary directory the servers' unprivileged user
// can enter (t.TempDir is private to its creator).
func reachableDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
