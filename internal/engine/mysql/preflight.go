package mysql

import (
	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
)

var (
	_ engine.DSNChecker = (*Engine)(nil)
	_ engine.Layout     = (*Engine)(nil)
)

// CheckDSN implements engine.DSNChecker: go-sql-driver parses the DSN as it
// will to connect; the unix network is a socket.
func (e *Engine) CheckDSN(dsn string) (string, error) {
	cfg, err := mysqldrv.ParseDSN(dsn)
	if err != nil {
		return "", err
	}
	if cfg.Net == "unix" {
		return "socket", nil
	}
	return "tcp", nil
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
