// Package mysql is the MariaDB engine (registered as "mariadb" and "mysql";
// MySQL's own server binaries are accepted too): a server dbio creates and runs
// on the storage under test (mariadb-install-db, redo log on the log target, a
// free loopback port, its own socket directory, an unprivileged user), or an
// existing server reached through a DSN, where dbio works only in a database
// it created.
//
// Connections go through go-sql-driver/mysql. DSN is in that driver's format
// and always carries multiStatements=true (a workload may send a batch of
// statements in one round trip), interpolateParams=true (arguments are
// substituted client-side, saving the prepare round trip of every query) and
// parseTime=true (DATETIME columns scan into time.Time).
package mysql

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"dbio/internal/engine/server"
	"dbio/internal/execx"
)

// Engine starts MariaDB (or MySQL) instances.
type Engine struct {
	server.Engine
}

// New returns the engine named name ("mariadb" or "mysql"), running its
// programs through r and listing its processes from procRoot (normally
// /proc). Both run whichever server is installed; the name only decides
// which binary is preferred when both are.
func New(name string, r execx.Runner, procRoot string) *Engine {
	e := &Engine{}
	e.Engine = server.NewEngine(name, r, procRoot, server.Specific{Label: name, Settings: settingNames,
		External: e.startExternal, Managed: e.startManaged, CheckDSN: dsns.Check,
		DSNScheme: dsns.Scheme, DSNAddress: dsns.Where, ConnectError: dsns.Refused,
		ListSettings: e.listSettings, ExternalAdmin: openExternalAdmin, Memory: memory, MaxConnectionsQuery: "SELECT @@max_connections",
		StandardDirs: func() []string { return standardDirs }})
	return e
}

// flavour tells MariaDB from MySQL, whose servers differ in how an instance
// is created and how users authenticate.
type flavour string

const (
	mariadb flavour = "mariadb"
	mysql   flavour = "mysql"
)

// binaries are the programs of one installation.
type binaries struct {
	server string
	// install creates an instance (MariaDB's mariadb-install-db); MySQL's
	// server initializes one itself.
	install string
	flavour flavour
	version string
}

// installHint is the fix offered when no server is installed.
const installHint = "install it with `apt-get install -y mariadb-server` (or put the directory holding mariadbd or mysqld in PATH)"

var standardDirs = []string{"/usr/sbin", "/usr/bin", "/usr/libexec", "/usr/local/mysql/bin", "/usr/local/mysql/scripts"}

func (e *Engine) findBinaries(ctx context.Context) (binaries, error) {
	dirs := e.SearchDirs()
	names := []string{"mariadbd", "mysqld"}
	if e.Name() == "mysql" {
		names = []string{"mysqld", "mariadbd"}
	}
	var b binaries
	var errs []string
	for _, n := range names {
		p, err := server.Find(e.Runner, n, dirs...)
		if err == nil {
			b.server = p
			break
		}
		errs = append(errs, err.Error())
	}
	if b.server == "" {
		return b, fmt.Errorf("no MariaDB or MySQL server found (%s): %s", strings.Join(errs, "; "), installHint)
	}
	res, err := e.Runner.Run(ctx, execx.Cmd{Name: b.server, Args: []string{"--version"}})
	if err != nil {
		return b, fmt.Errorf("%s --version: %w", b.server, err)
	}
	b.flavour, b.version, err = parseVersion(string(res.Stdout))
	if err != nil {
		return b, err
	}
	if b.flavour == mariadb {
		for _, n := range []string{"mariadb-install-db", "mysql_install_db"} {
			if p, err := server.Find(e.Runner, n, dirs...); err == nil {
				b.install = p
				break
			}
		}
		if b.install == "" {
			return b, fmt.Errorf("%s found but not mariadb-install-db, which creates an instance: %s", b.server, installHint)
		}
	}
	return b, nil
}

var versionRE = regexp.MustCompile(`Ver (\d+\.\d+\.\d+)(\S*)`)

// parseVersion reads `mariadbd --version` ("mariadbd  Ver 10.11.6-MariaDB-0+deb12u1
// for debian-linux-gnu ...") or `mysqld --version` ("mysqld  Ver 8.0.36 for Linux
// on x86_64 (MySQL Community Server - GPL)").
func parseVersion(out string) (flavour, string, error) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", "", fmt.Errorf("cannot read the version from %q", strings.TrimSpace(out))
	}
	if strings.Contains(out, "MariaDB") {
		return mariadb, m[1], nil
	}
	return mysql, m[1], nil
}
