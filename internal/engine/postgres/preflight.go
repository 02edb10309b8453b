package postgres

import (
	"strings"

	"github.com/jackc/pgx/v5"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

var _ engine.Layout = (*Engine)(nil)

// dsns read DSNs as pgx does; a host that is a directory is a Unix socket.
var dsns = server.DSN[*pgx.ConnConfig]{
	Parse:  pgx.ParseConfig,
	Socket: func(c *pgx.ConnConfig) bool { return strings.HasPrefix(c.Host, "/") },
	Forms:  "postgres://user:password@host:5432/db or 'host=... user=... dbname=...'",
}

// Subdirs implements engine.Layout.
func (e *Engine) Subdirs(separateLog bool) (data, log []string) {
	if separateLog {
		return []string{dataSub}, []string{walSub}
	}
	return []string{dataSub}, nil
}

// Replaces implements engine.Layout: a fresh start re-creates the whole instance.
func (e *Engine) Replaces(engine.Options) []string { return []string{dataSub} }
