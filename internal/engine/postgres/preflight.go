package postgres

import (
	"strings"

	"github.com/jackc/pgx/v5"

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

// parseDSN parses dsn as pgx will to connect and says how it reaches the
// server: a host that is a directory is a Unix socket.
func parseDSN(dsn string) (*pgx.ConnConfig, string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, "", err
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return cfg, "socket", nil
	}
	return cfg, "tcp", nil
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
