// Package postgres is the PostgreSQL engine: a server dbio creates and runs on
// the storage under test (initdb, WAL on the log target, a free loopback port,
// its own socket directory, an unprivileged user), or an existing server
// reached through a DSN, where dbio works only in a database it created.
//
// Connections go through pgx: DB is a database/sql pool on the "pgx" driver,
// and DSN is a keyword/value connection string that pgx.ParseConfig and
// pgxpool accept, for workloads that want native batching and COPY.
package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/engine/server"
	"dbio/internal/execx"
)

// Engine starts PostgreSQL instances.
type Engine struct {
	server.Engine
}

// New returns the engine named name ("postgres", or the alias "postgresql"),
// running its programs through r and listing its processes from procRoot
// (normally /proc).
func New(name string, r execx.Runner, procRoot string) *Engine {
	e := &Engine{}
	e.Engine = server.NewEngine(name, r, procRoot, server.Specific{Label: "postgres", Settings: settingNames,
		External: e.startExternal, Managed: e.startManaged, CheckDSN: dsns.Check,
		DSNScheme: dsns.Scheme, DSNAddress: dsns.Where, ConnectError: dsns.Refused,
		ListSettings: e.listSettings, ExternalAdmin: openExternalAdmin, Memory: memory, MaxConnectionsQuery: "SELECT current_setting('max_connections')::int",
		StandardDirs: func() []string { return debianBinDirs("/usr/lib/postgresql") }})
	return e
}

// binaries are the server programs of one PostgreSQL installation.
type binaries struct {
	initdb, postgres string
	// major is the major version, e.g. "15".
	major string
}

// installHint is the fix offered when no PostgreSQL server is installed.
const installHint = "install it with `apt-get install -y postgresql` (or put its bin directory in PATH)"

func (e *Engine) findBinaries(ctx context.Context) (binaries, error) {
	dirs := e.SearchDirs()
	initdb, err := server.Find(e.Runner, "initdb", dirs...)
	if err != nil {
		return binaries{}, fmt.Errorf("postgresql server programs not found (%v): %s", err, installHint)
	}
	pg := filepath.Join(filepath.Dir(initdb), "postgres")
	if _, err := os.Stat(pg); err != nil {
		return binaries{}, fmt.Errorf("initdb found at %s but no postgres server beside it: %s", initdb, installHint)
	}
	res, err := e.Runner.Run(ctx, execx.Cmd{Name: pg, Args: []string{"--version"}})
	if err != nil {
		return binaries{}, fmt.Errorf("postgres --version: %w", err)
	}
	major, err := majorVersion(string(res.Stdout))
	if err != nil {
		return binaries{}, err
	}
	return binaries{initdb: initdb, postgres: pg, major: major}, nil
}

var versionRE = regexp.MustCompile(`\(PostgreSQL\) (\d+)(?:\.(\d+))?`)

// majorVersion reads the major version from `postgres --version`
// ("postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)"); before version 10 the
// major version had two parts.
func majorVersion(out string) (string, error) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("cannot read the version from postgres --version output %q", strings.TrimSpace(out))
	}
	if n, _ := strconv.Atoi(m[1]); n < 10 && m[2] != "" {
		return m[1] + "." + m[2], nil
	}
	return m[1], nil
}

// dataVersion is the major version of PostgreSQL that created the data
// directory (or base backup) dir, as its PG_VERSION file says.
func dataVersion(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "PG_VERSION"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// debianBinDirs lists root/<version>/bin, newest version first.
func debianBinDirs(root string) []string {
	matches, _ := filepath.Glob(filepath.Join(root, "*", "bin"))
	version := func(dir string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		return v
	}
	sort.SliceStable(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	return matches
}
