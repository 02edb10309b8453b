package sysbench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"dbio/internal/engine"
)

func init() { registerDialect("postgres", newPostgresDialect) }

func newPostgresDialect(engine.Instance) *dialect {
	return &dialect{
		// As sysbench's pgsql driver creates it: SERIAL ids, the same columns.
		columns:     "id SERIAL NOT NULL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)",
		placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
		beginRead:   "BEGIN",
		beginWrite:  "BEGIN",
		analyze:     func(table string) string { return "ANALYZE " + table },
		afterLoad: func(ctx context.Context, conn *sql.Conn, table string, rows int) error {
			// Ids were loaded explicitly; the sequence goes past them, as
			// after sysbench's own load.
			_, err := conn.ExecContext(ctx, fmt.Sprintf("SELECT setval('%s_id_seq', %d)", table, rows))
			return err
		},
		loadWorkers: 4,
		classify:    classifyPostgres,
		notes: []string{
			"PostgreSQL: deadlocks (40P01), serialization failures (40001) and duplicate keys from concurrent delete-inserts of one id (23505) are rolled back and the transaction runs again, as sysbench 1.0's pgsql driver does.",
		},
	}
}

func classifyPostgres(err error) errClass {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40P01" || pe.Code == "40001" || pe.Code == "23505":
			return errRetry
		case pe.Code == "53100" || strings.HasPrefix(pe.Code, "58") || strings.HasPrefix(pe.Code, "XX"):
			return errFatal // disk full, system or internal error
		case strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P"):
			return errLost // connection exception, server shutting down
		}
		return errFailed
	}
	if lostConnection(err) {
		return errLost
	}
	return errFailed
}

// lostConnection recognizes a connection that broke under the driver.
func lostConnection(err error) bool {
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &ne) || errors.Is(err, sql.ErrConnDone)
}
