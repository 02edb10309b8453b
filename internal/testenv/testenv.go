// Package testenv decides what a test does when the machine lacks something
// it needs: a program such as fio, a database server, Chromium, root or a
// cgroup controller. Outside CI the test is skipped with a message saying
// how to get what is missing; under CI (the CI environment variable set to
// true, as CI services set it) the test fails instead, so that a CI image
// that lost a package cannot turn tests into silent skips and coverage
// cannot vanish unnoticed.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Install hints: the Debian 12 commands that install what the tests need.
// `make test` runs them through scripts/deps.sh.
const (
	InstallFio      = "apt-get install -y fio"
	InstallPostgres = "apt-get install -y postgresql"
	InstallMariaDB  = "apt-get install -y mariadb-server mariadb-backup"
	InstallSysbench = "apt-get install -y sysbench"
	InstallChromium = "apt-get install -y chromium"
)

// What to do when the machine, rather than a package, is what is missing.
const (
	HowRootAndBlkio    = "run the tests as root on a host with cgroup v1 blkio or cgroup v2 io control (CI does)"
	HowBlockDeviceTemp = "set TMPDIR to a directory on a disk-backed filesystem such as ext4 or xfs"
	HowRoot            = "run the tests as root (CI does)"
	HowRootAndMemcg    = "run the tests as root on a host with a cgroup v1 memory hierarchy or a cgroup v2 memory controller (CI does)"
)

// T is the part of testing.TB a requirement uses; *testing.T and
// *testing.B satisfy it.
type T interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Machine is what requirements look at. Host returns the running machine;
// tests of this package pass a fake one.
type Machine struct {
	// Getenv reads an environment variable (CI).
	Getenv func(key string) string
	// LookPath finds a program in PATH.
	LookPath func(name string) (string, error)
	// Glob lists the paths matching a pattern, for programs Debian installs
	// outside PATH (/usr/lib/postgresql/15/bin/initdb).
	Glob func(pattern string) ([]string, error)
}

// Host is the machine the tests run on.
func Host() Machine {
	return Machine{Getenv: os.Getenv, LookPath: exec.LookPath, Glob: executables}
}

// executables is filepath.Glob keeping only executable regular files.
func executables(pattern string) ([]string, error) {
	m, err := filepath.Glob(pattern)
	var out []string
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			out = append(out, p)
		}
	}
	return out, err
}

// CI says whether the tests run under CI, where nothing they need may be missing.
func (m Machine) CI() bool {
	ci, err := strconv.ParseBool(m.Getenv("CI"))
	return err == nil && ci
}

// Require stops t unless met: need says what is missing ("fio"), how how
// to get it ("install it with: apt-get install -y fio").
func (m Machine) Require(t T, met bool, need, how string) {
	t.Helper()
	if met {
		return
	}
	if m.CI() {
		t.Fatalf("this test needs %s, which is missing, and CI=true forbids skipping it: %s", need, how)
		return
	}
	t.Skipf("skipped: this test needs %s, which is missing: %s (make test does)", need, how)
}

// Find returns the first of programs found in PATH or in a directory
// matching one of the dirs patterns, or "".
func (m Machine) Find(programs []string, dirs ...string) string {
	for _, p := range programs {
		if path, err := m.LookPath(p); err == nil {
			return path
		}
	}
	for _, d := range dirs {
		for _, p := range programs {
			if found, _ := m.Glob(filepath.Join(d, p)); len(found) > 0 {
				return found[0]
			}
		}
	}
	return ""
}

// RequireProgram returns the path of the program name, found in PATH or in
// one of dirs (glob patterns), and stops t when there is none.
func (m Machine) RequireProgram(t T, name, install string, dirs ...string) string {
	t.Helper()
	path := m.Find([]string{name}, dirs...)
	m.Require(t, path != "", name, "install it with: "+install)
	return path
}

// RequireEngine stops t unless the named database engine can be run here:
// "postgres" needs initdb, "mariadb" mariadbd (or mysqld). SQLite is built
// into dbio and always can.
func (m Machine) RequireEngine(t T, engine string) {
	t.Helper()
	var programs, dirs []string
	var install string
	switch engine {
	case "sqlite":
		return
	case "postgres":
		programs, dirs, install = []string{"initdb"}, []string{"/usr/lib/postgresql/*/bin"}, InstallPostgres
	case "mariadb", "mysql":
		programs, dirs, install = []string{"mariadbd", "mysqld"}, []string{"/usr/sbin", "/usr/bin"}, InstallMariaDB
	default:
		t.Fatalf("testenv: no engine %q", engine)
		return
	}
	m.Require(t, m.Find(programs, dirs...) != "", fmt.Sprintf("the %s server (%s)", engine, programs[0]), "install it with: "+install)
}

// Require is Host().Require.
func Require(t T, met bool, need, how string) {
	t.Helper()
	Host().Require(t, met, need, how)
}

// RequireProgram is Host().RequireProgram.
func RequireProgram(t T, name, install string, dirs ...string) string {
	t.Helper()
	return Host().RequireProgram(t, name, install, dirs...)
}

// RequireEngine is Host().RequireEngine.
func RequireEngine(t T, engine string) {
	t.Helper()
	Host().RequireEngine(t, engine)
}
