package sysbench

import (
	"os"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/engine/enginetest"
)

// The servers are started once for the package's tests, on free ports in
// temporary directories, and stopped when the tests end; each test prepares
// its own tables.
var servers *enginetest.Servers

func TestMain(m *testing.M) {
	s, stop := enginetest.Start("sysbench")
	servers = s
	code := m.Run()
	stop()
	os.Exit(code)
}

// instance returns the package's instance of the named engine.
func instance(t testing.TB, name string) engine.Instance { return servers.Instance(t, name) }

var engineNames = enginetest.Names

// forEachEngine runs f as a subtest per engine.
func forEachEngine(t *testing.T, f func(t *testing.T, inst engine.Instance)) { servers.ForEach(t, f) }
