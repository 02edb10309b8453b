package mysql

import (
	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
)

var (
	_ engine.DSNChecker = (*Engine)(nil)
	_ engine.Layout     = (*Engine)(nil)
)

// CheckDSN implements engine.DSNChecker.
func (e *Engine) CheckDSN(dsn string) (string, error) {
	_, transport, err := parseDSN(dsn)
	return transport, err
}

// parseDSN parses dsn as go-sql-driver will to connect and says how it
// reaches the server: the unix network is a socket.
func parseDSN(dsn string) (*mysqldrv.Config, string, error) {
	cfg, err := mysqldrv.ParseDSN(dsn)
	if err != nil {
		return nil, "", err
	}
	if cfg.Net == "unix" {
		return cfg, "socket", nil
	}
	return cfg, "tcp", nil
}

// Subdirs implements engine.Layout. Which server is installed decides the
// directory's name (mariadb or mysql), so both are named.
func (e *Engine) Subdirs(separateLog bool) (data, log []string) {
	data = []string{string(mariadb), string(mysql)}
	if separateLog {
		log = []string{string(mariadb) + "-redo", string(mysql) + "-redo"}
	}
	return data, log
}

// Replaces implements engine.Layout: a fresh start re-creates the whole
// instance, in whichever of the two directories the installed server uses.
func (e *Engine) Replaces(engine.Options) []string { return []string{string(mariadb), string(mysql)} }
