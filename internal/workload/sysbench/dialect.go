package sysbench

import (
	"context"
	"database/sql"
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/workload/sqlclient"
)

// engineSQL is what sysbench itself chooses per engine: the statements are
// the same everywhere, the table definition differs as sysbench's drivers
// create it. The rest of the SQL comes from the engine's sqlclient dialect.
type engineSQL struct {
	// columns is the body of CREATE TABLE sbtest<N> (...).
	columns string
	// afterLoad is anything else a loaded table of rows rows needs (a
	// sequence moved past the ids loaded explicitly); nil when nothing.
	afterLoad func(table string, rows int) func(ctx context.Context, conn *sql.Conn) error
	// notes explain engine-specific choices, for the results.
	notes []string
}

// sqlFor returns sysbench's choices for d's engine.
func sqlFor(d *sqlclient.Dialect) engineSQL {
	return sqlclient.ByEngine[engineSQL]{
		SQLite: engineSQL{
			// INTEGER PRIMARY KEY is SQLite's rowid: ids are assigned automatically.
			columns: "id INTEGER NOT NULL PRIMARY KEY, k INTEGER DEFAULT 0 NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL",
			notes: []string{
				"SQLite writers serialized: transactions that write start with BEGIN IMMEDIATE after queueing on one in-process lock per database; read-only ones run concurrently on WAL snapshots. Latency includes the wait for the write lock.",
				"sysbench has no SQLite driver: the sbtest tables use SQLite's types (id is the rowid).",
			},
		},
		Postgres: engineSQL{
			// As sysbench's pgsql driver creates it: SERIAL ids, the same columns.
			columns: "id SERIAL NOT NULL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)",
			afterLoad: func(table string, rows int) func(ctx context.Context, conn *sql.Conn) error {
				return func(ctx context.Context, conn *sql.Conn) error {
					// Ids were loaded explicitly; the sequence goes past them, as
					// after sysbench's own load.
					_, err := conn.ExecContext(ctx, fmt.Sprintf("SELECT setval('%s_id_seq', %d)", table, rows))
					return err
				}
			},
			notes: []string{
				"PostgreSQL: deadlocks (40P01), serialization failures (40001) and duplicate keys from concurrent delete-inserts of one id (23505) are rolled back and the transaction runs again, as sysbench 1.0's pgsql driver does.",
			},
		},
		MySQL: engineSQL{
			// As sysbench's mysql driver creates it.
			columns: "id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)",
			notes: []string{
				"MariaDB: statements are server-side prepared, as sysbench's default --db-ps-mode=auto does; a statement over max_prepared_stmt_count is sent unprepared. Deadlocks (1213), lock wait timeouts (1205) and 'record has changed' (1020) are rolled back and the transaction runs again: sysbench 1.0's default --mysql-ignore-errors.",
			},
		},
	}.For(d)
}

// sqlDialects gives an instance's dialect; its writers queue the writes of
// the loader and the sessions to one SQLite database.
type sqlDialects struct {
	writers sqlclient.Writers
	// sockets overrides the engine's choice between blocking sockets and
	// Go's network poller for every session, for the cross-check's
	// comparison of the two.
	sockets sqlclient.Sockets
}

func (s *sqlDialects) dialect(inst engine.Instance) (*sqlclient.Dialect, error) {
	d, err := sqlclient.For("sysbench", inst, &s.writers)
	if err != nil {
		return nil, err
	}
	d.Sockets = s.sockets
	return d, nil
}

func tableName(n int) string { return fmt.Sprintf("sbtest%d", n) }

// EngineNotes describe how the engine's backend runs sysbench, for the results.
func (w *Workload) EngineNotes(inst engine.Instance) []string {
	d, err := w.dialect(inst)
	if err != nil {
		return nil
	}
	notes := append([]string{fmt.Sprintf("%s: %d reads, %d writes, %d other queries per transaction; ids drawn %s", w.cfg.Workload,
		w.shape.reads(), w.shape.writes(), w.shape.other(), w.cfg.RandType)}, sqlFor(d).notes...)
	if note := d.SocketsNote(); note != "" {
		notes = append(notes, note)
	}
	return notes
}
