package mysql

import (
	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

var _ engine.Layout = (*Engine)(nil)

// dsns read DSNs as go-sql-driver does; the unix network is a socket.
var dsns = server.DSN[*mysqldrv.Config]{
	Parse:  mysqldrv.ParseDSN,
	Socket: func(c *mysqldrv.Config) bool { return c.Net == "unix" },
	Forms:  "user:password@tcp(host:3306)/ or user:password@unix(/run/mysqld/mysqld.sock)/",
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
