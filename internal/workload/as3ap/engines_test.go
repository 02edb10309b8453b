package as3ap

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
)

// The servers are started once for the package's tests, on free ports in
// temporary directories, and stopped when the tests end; each test prepares
// its own tables.
var (
	serverRoot string
	serversMu  sync.Mutex
	servers    = map[string]engine.Instance{}
	serverErrs = map[string]error{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dbio-as3ap-")
	if err != nil {
		panic(err)
	}
	// The servers run as an unprivileged user, who must reach their directories.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	serverRoot = dir
	code := m.Run()
	for name, inst := range servers {
		began := time.Now()
		inst.Stop(context.Background())
		if testing.Verbose() {
			fmt.Printf("stopped %s in %s\n", name, time.Since(began).Round(time.Millisecond))
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// installed says whether a server engine's programs are on this machine.
func installed(name string) bool {
	var candidates []string
	switch name {
	case "postgres":
		candidates, _ = filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		if p, err := exec.LookPath("initdb"); err == nil {
			candidates = append(candidates, p)
		}
	case "mariadb":
		candidates = []string{"/usr/sbin/mariadbd", "/usr/sbin/mysqld"}
		if p, err := exec.LookPath("mariadbd"); err == nil {
			candidates = append(candidates, p)
		}
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return true
		}
	}
	return false
}

// instance returns the package's instance of the named engine: a fresh
// SQLite database per call, a shared server otherwise (skipping when its
// programs are not installed).
func instance(t *testing.T, name string) engine.Instance {
	t.Helper()
	if name == "sqlite" {
		tg, err := target.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		inst, err := sqlite.Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Database: "as3ap", Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Stop(context.Background()) })
		return inst
	}
	if !installed(name) {
		t.Skipf("%s server not installed, skipping (make test installs it)", name)
	}
	serversMu.Lock()
	defer serversMu.Unlock()
	if inst, ok := servers[name]; ok {
		return inst
	}
	if err, ok := serverErrs[name]; ok {
		t.Fatalf("start %s: %v", name, err)
	}
	tg, err := target.Open(filepath.Join(serverRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	var e engine.Engine
	opts := engine.Options{Database: "dbio_as3ap", Fresh: true, LogDir: filepath.Join(serverRoot, name+"-log")}
	switch name {
	case "postgres":
		e = postgres.New("postgres", execx.Real{})
	case "mariadb":
		e = mysql.New("mariadb", execx.Real{})
		// A small redo log keeps creating the instance quick.
		opts.Settings = map[string]string{"innodb_log_file_size": "48M"}
	}
	inst, err := e.Start(context.Background(), engine.Placement{Data: tg}, opts)
	if err != nil {
		serverErrs[name] = err
		t.Fatalf("start %s: %v", name, err)
	}
	servers[name] = inst
	return inst
}

var engineNames = []string{"sqlite", "postgres", "mariadb"}

// forEachEngine runs f as a subtest per engine.
func forEachEngine(t *testing.T, f func(t *testing.T, inst engine.Instance)) {
	for _, name := range engineNames {
		t.Run(name, func(t *testing.T) { f(t, instance(t, name)) })
	}
}
