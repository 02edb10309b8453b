package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"dbio/internal/engine/server"
	"dbio/internal/results"
)

// ioTimingSettings turn on the server's own timing of its I/O, which the
// waits it reports (waitsQuery) come from: track_io_timing times every
// data file read and write, track_wal_io_timing (PostgreSQL 14 and later)
// every WAL write and sync. Both read the clock twice per I/O, a cost
// PostgreSQL's pg_test_timing measures at well under a microsecond on a
// machine with a TSC clock source.
func ioTimingSettings(major string) []server.Setting {
	s := []server.Setting{{Name: "track_io_timing", Value: "on", Why: "the database's own read and write waits, recorded per second"}}
	if v, err := strconv.Atoi(major); err == nil && v >= 14 {
		s = append(s, server.Setting{Name: "track_wal_io_timing", Value: "on", Why: "the database's own WAL write and sync waits, recorded per second"})
	}
	return s
}

// waits is how one server version reports its I/O waits: a query returning
// one row of cumulative counts and milliseconds, in the order of names.
// NULL is a figure the version does not keep.
type waits struct {
	query string
	names []string
}

// waitsFor builds the waits query of a server version whose timing
// settings are as given; a figure whose timing is off is left out rather
// than reported as zero waits. PostgreSQL 16 gathers reads, writes and
// syncs of data files in pg_stat_io; 18 moves WAL writes and syncs there
// too. Before 16, reads and their time are in pg_stat_database and WAL in
// pg_stat_wal (14 and later); data file writes are left out: their time
// (blk_write_time) has no count of its own, pg_stat_bgwriter's count of
// backends' writes includes the file extensions no timer covers, and the
// checkpointer's time is not reported at all, so no mean wait per write
// can be derived.
func waitsFor(versionNum int, ioTiming, walTiming bool) waits {
	var cols []string
	var names []string
	add := func(ops, ms string, kind results.DBWaitKind) {
		cols = append(cols, "("+ops+")::float8", "("+ms+")::float8")
		opsName, msName := kind.Counters()
		names = append(names, opsName, msName)
	}
	if ioTiming {
		switch {
		case versionNum >= 160000:
			io := func(col string) string {
				return "SELECT sum(" + col + ") FROM pg_stat_io WHERE object = 'relation'"
			}
			add(io("reads"), io("read_time"), results.DBWaitRead)
			add(io("writes"), io("write_time"), results.DBWaitWrite)
			add(io("fsyncs"), io("fsync_time"), results.DBWaitDataSync)
		default:
			add("SELECT sum(blks_read) FROM pg_stat_database", "SELECT sum(blk_read_time) FROM pg_stat_database", results.DBWaitRead)
		}
	}
	if walTiming {
		switch {
		case versionNum >= 180000:
			wal := func(col string) string { return "SELECT sum(" + col + ") FROM pg_stat_io WHERE object = 'wal'" }
			add(wal("writes"), wal("write_time"), results.DBWaitLogWrite)
			add(wal("fsyncs"), wal("fsync_time"), results.DBWaitSync)
		case versionNum >= 140000:
			add("SELECT wal_write FROM pg_stat_wal", "SELECT wal_write_time FROM pg_stat_wal", results.DBWaitLogWrite)
			add("SELECT wal_sync FROM pg_stat_wal", "SELECT wal_sync_time FROM pg_stat_wal", results.DBWaitSync)
		}
	}
	if len(cols) == 0 {
		return waits{}
	}
	q := "SELECT "
	for i, c := range cols {
		if i > 0 {
			q += ", "
		}
		q += c
	}
	return waits{query: q, names: names}
}

// read adds the waits to m; a server without them adds nothing.
func (w waits) read(ctx context.Context, db *sql.DB, m map[string]float64) error {
	if w.query == "" {
		return nil
	}
	vals := make([]sql.NullFloat64, len(w.names))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := db.QueryRowContext(ctx, w.query).Scan(dest...); err != nil {
		return fmt.Errorf("postgres I/O waits: %w", err)
	}
	for i, v := range vals {
		if v.Valid {
			m[w.names[i]] = v.Float64
		}
	}
	return nil
}

// timingOn reads whether the server times its data file and WAL I/O.
func timingOn(ctx context.Context, db *sql.DB, versionNum int) (io, wal bool, err error) {
	q := "SELECT current_setting('track_io_timing')::bool, false"
	if versionNum >= 140000 {
		q = "SELECT current_setting('track_io_timing')::bool, current_setting('track_wal_io_timing')::bool"
	}
	err = db.QueryRowContext(ctx, q).Scan(&io, &wal)
	return io, wal, err
}
