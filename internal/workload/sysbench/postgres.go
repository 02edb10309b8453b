package sysbench

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"dbio/internal/engine"
	"dbio/internal/workload/txerr"
)

func init() { registerDialect("postgres", newPostgresDialect) }

func newPostgresDialect(inst engine.Instance) *dialect {
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
		classify:    txerr.For(inst),
		notes: []string{
			"PostgreSQL: deadlocks (40P01), serialization failures (40001) and duplicate keys from concurrent delete-inserts of one id (23505) are rolled back and the transaction runs again, as sysbench 1.0's pgsql driver does.",
		},
	}
}
