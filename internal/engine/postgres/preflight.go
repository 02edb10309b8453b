package postgres

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

var _ engine.Layout = (*Engine)(nil)

// dsns read DSNs as pgx does; a host that is a directory is a Unix socket.
var dsns = server.DSN[*pgx.ConnConfig]{
	Parse:  pgx.ParseConfig,
	Socket: func(c *pgx.ConnConfig) bool { return strings.HasPrefix(c.Host, "/") },
	Forms:  "postgres://user:password@host:5432/db or 'host=... user=... dbname=...'",
	Address: func(c *pgx.ConnConfig) string {
		if strings.HasPrefix(c.Host, "/") {
			return fmt.Sprintf("%s/.s.PGSQL.%d", c.Host, c.Port)
		}
		return net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))
	},
	Scheme:  dsnScheme,
	Refusal: refusal,
}

// dsnScheme says whether dsn is written for PostgreSQL: a postgres:// or
// postgresql:// URL, or libpq's keyword=value form (which no other
// engine's DSN is).
func dsnScheme(dsn string) (string, bool) {
	scheme, _, isURL := strings.Cut(dsn, "://")
	if isURL {
		// One engine, whichever of libpq's two schemes names it.
		ours := scheme == "postgres" || scheme == "postgresql"
		if ours {
			scheme = "postgres"
		}
		return scheme, ours
	}
	pairs, err := keywordPairs(dsn)
	return "", err == nil && len(pairs) > 0
}

// refusal says what a server's refusal of a connection means, by its
// SQLSTATE, and what the user checks.
func refusal(err error) (reason, hint string, ok bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return "", "", false
	}
	switch pe.Code {
	case "28000": // a role that does not exist, or no pg_hba.conf line for it
		return pe.Message, "check the DSN's user, " + PasswordEnv + ", pg_hba.conf", true
	case "28P01":
		return pe.Message, "check the DSN's password, or " + PasswordEnv + " when the DSN has none", true
	case "3D000":
		return pe.Message, "check the DSN's database: dbio connects to it to create its own (postgres exists on most servers)", true
	case "53300":
		return pe.Message, "the server has no connection to spare: wait for other clients, or raise its max_connections", true
	case "57P03":
		return pe.Message, "the server does not accept connections yet: wait until it has started", true
	}
	return "", "", false
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
