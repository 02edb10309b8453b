// Package enginetest gives a package's tests the real engines to run
// against: a fresh SQLite database per test, and one PostgreSQL and one
// MariaDB server per test binary, started on free ports in a temporary
// directory on first use and stopped when the tests end. Tests of an engine
// whose programs are not installed are skipped with the install hint, or
// fail under CI (see testenv).
package enginetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/mysql"
	"dbio/internal/engine/postgres"
	"dbio/internal/engine/sqlite"
	"dbio/internal/execx"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// Names are the engines every workload is tested on.
var Names = []string{"sqlite", "postgres", "mariadb"}

// Servers are one test binary's shared servers.
type Servers struct {
	database string
	root     string

	mu      sync.Mutex
	servers map[string]engine.Instance
	errs    map[string]error
}

// Start prepares the servers of a test binary whose workload owns database;
// call it from TestMain and call the returned stop after m.Run.
func Start(database string) (*Servers, func()) {
	dir, err := os.MkdirTemp("", "dbio-"+database+"-")
	if err != nil {
		panic(err)
	}
	// The servers run as an unprivileged user, who must reach their directories.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	s := &Servers{database: database, root: dir, servers: map[string]engine.Instance{}, errs: map[string]error{}}
	stop := func() {
		for name, inst := range s.servers {
			began := time.Now()
			inst.Stop(context.Background())
			if testing.Verbose() {
				fmt.Printf("stopped %s in %s\n", name, time.Since(began).Round(time.Millisecond))
			}
		}
		os.RemoveAll(dir)
	}
	return s, stop
}

// Instance returns the named engine: a fresh SQLite database per call, the
// binary's shared server otherwise.
func (s *Servers) Instance(t testing.TB, name string) engine.Instance {
	t.Helper()
	if name == "sqlite" {
		tg, err := target.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		inst, err := sqlite.Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Database: s.database, Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Stop(context.Background()) })
		return inst
	}
	testenv.RequireEngine(t, name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if inst, ok := s.servers[name]; ok {
		return inst
	}
	if err, ok := s.errs[name]; ok {
		t.Fatalf("start %s: %v", name, err)
	}
	tg, err := target.Create(filepath.Join(s.root, name))
	if err != nil {
		t.Fatal(err)
	}
	var e engine.Engine
	opts := engine.Options{Database: "dbio_" + s.database, Fresh: true, LogDir: filepath.Join(s.root, name+"-log")}
	switch name {
	case "postgres":
		e = postgres.New("postgres", execx.Real{}, "/proc")
	case "mariadb":
		e = mysql.New("mariadb", execx.Real{}, "/proc")
		// A small redo log keeps creating the instance quick.
		opts.Settings = map[string]string{"innodb_log_file_size": "48M"}
	default:
		t.Fatalf("no test engine %q", name)
	}
	inst, err := e.Start(context.Background(), engine.Placement{Data: tg}, opts)
	if err != nil {
		s.errs[name] = err
		t.Fatalf("start %s: %v", name, err)
	}
	s.servers[name] = inst
	return inst
}

// ForEach runs f as a subtest on every engine.
func (s *Servers) ForEach(t *testing.T, f func(t *testing.T, inst engine.Instance)) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) { f(t, s.Instance(t, name)) })
	}
}
