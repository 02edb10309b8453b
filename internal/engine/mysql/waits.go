package mysql

import (
	"context"
	"database/sql"
	"fmt"

	"dbio/internal/engine/server"
	"dbio/internal/results"
)

// fileWaitSettings turn on performance_schema's timing of InnoDB's file
// I/O, which the waits Stats reports come from, and (on MariaDB) size the
// rest of performance_schema down to nothing: at max_connections 300 its
// statement, stage, memory and table instruments take about 110 MB, which a
// server whose memory is capped would miss; what remains takes about 20 MB.
// InnoDB's mutexes and rwlocks stay untimed: timing them cost more than 1 %
// of TPC-C's throughput for waits of about 2 % of its database time (see
// docs/verdict.md).
func fileWaitSettings(f flavour) []server.Setting {
	why := "the database's own file I/O waits, recorded per second"
	s := []server.Setting{
		{Name: "performance_schema", Value: "ON", Why: why},
		{Name: "performance-schema-instrument", Value: "wait/io/file/innodb/%=ON", Why: "time InnoDB's data and log file I/O"},
	}
	if f != mariadb {
		return s
	}
	off := "performance_schema kept to file waits: no memory for what dbio does not read"
	for _, name := range []string{
		"performance_schema_max_statement_classes", "performance_schema_max_stage_classes", "performance_schema_max_memory_classes",
		"performance_schema_digests_size", "performance_schema_max_digest_length", "performance_schema_max_sql_text_length",
		"performance_schema_accounts_size", "performance_schema_hosts_size", "performance_schema_users_size",
		"performance_schema_max_table_instances", "performance_schema_max_table_handles", "performance_schema_max_index_stat",
		"performance_schema_max_table_lock_stat", "performance_schema_max_metadata_locks",
		"performance_schema_max_prepared_statements_instances", "performance_schema_max_program_instances",
		"performance_schema_events_waits_history_size", "performance_schema_events_waits_history_long_size",
		"performance_schema_events_statements_history_size", "performance_schema_events_statements_history_long_size",
		"performance_schema_events_stages_history_size", "performance_schema_events_stages_history_long_size",
		"performance_schema_events_transactions_history_size", "performance_schema_events_transactions_history_long_size",
		"performance_schema_session_connect_attrs_size",
	} {
		s = append(s, server.Setting{Name: name, Value: "0", Why: off})
		off = ""
	}
	return s
}

// The InnoDB files whose waits are read: data files (tablespaces and the
// doublewrite buffer) and, where the server instruments it (MySQL,
// MariaDB before 10.8), the redo log.
const (
	dataFile = "wait/io/file/innodb/innodb_data_file"
	logFile  = "wait/io/file/innodb/innodb_log_file"
)

// waitsQuery reads performance_schema's file I/O summary of the InnoDB
// files whose instrument is enabled and timed, so that an instrument left
// off (an external server's choice) reports nothing rather than no wait.
const waitsQuery = statsMarker + `SELECT f.EVENT_NAME, f.COUNT_READ, f.SUM_TIMER_READ, f.COUNT_WRITE, f.SUM_TIMER_WRITE, f.COUNT_MISC, f.SUM_TIMER_MISC
FROM performance_schema.file_summary_by_event_name f
JOIN performance_schema.setup_instruments i ON i.NAME = f.EVENT_NAME
WHERE i.ENABLED = 'YES' AND i.TIMED = 'YES' AND f.EVENT_NAME IN ('` + dataFile + `', '` + logFile + `')`

// picosPerMs turns performance_schema's timer (picoseconds) into ms.
const picosPerMs = 1e9

// readWaits adds the file waits to m. Reads of data files are what a query
// waits for when a page is not in the buffer pool; their misc operations
// are mostly fsyncs (with the rare open and close), the data sync; writes
// of the redo log and its fsyncs are the log write and the sync a commit
// waits for. A server with performance_schema off adds nothing.
func readWaits(ctx context.Context, db *sql.DB, m map[string]float64) error {
	rows, err := db.QueryContext(ctx, waitsQuery)
	if err != nil {
		return fmt.Errorf("performance_schema file waits: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var reads, readPs, writes, writePs, misc, miscPs float64
		if err := rows.Scan(&name, &reads, &readPs, &writes, &writePs, &misc, &miscPs); err != nil {
			return fmt.Errorf("performance_schema file waits: %w", err)
		}
		put := func(kind results.DBWaitKind, ops, waitPs float64) {
			opsName, waitName := kind.Counters()
			m[opsName], m[waitName] = ops, waitPs/picosPerMs
		}
		switch name {
		case dataFile:
			put(results.DBWaitRead, reads, readPs)
			put(results.DBWaitWrite, writes, writePs)
			put(results.DBWaitDataSync, misc, miscPs)
		case logFile:
			put(results.DBWaitLogWrite, writes, writePs)
			put(results.DBWaitSync, misc, miscPs)
		}
	}
	return rows.Err()
}
