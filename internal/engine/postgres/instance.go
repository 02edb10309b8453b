package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"syscall"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

// shutdown is a fast shutdown (SIGINT, what `pg_ctl stop -m fast` sends:
// sessions are ended, a checkpoint is written), escalating to an immediate
// shutdown and then SIGKILL if it does not finish within server.StopGrace.
var shutdown = server.Shutdown{Signal: syscall.SIGINT, Escalate: syscall.SIGQUIT, Grace: server.StopGrace}

// Instance is a running PostgreSQL database, managed or external.
type Instance struct {
	server.Instance
	// statsQuery reads the cumulative counters; it depends on the server version.
	statsQuery string
	// waits reads the I/O waits the server timed; empty when it times none.
	waits waits

	// admin reaches a database other than dbio's on the same server, to drop
	// and re-create dbio's database for a logical restore.
	admin *pgx.ConnConfig
	// tools is how pg_dump and pg_restore reach dbio's database.
	tools toolConn

	// managed is set for a server dbio runs.
	managed *managedServer
	// dbTime samples the sessions for database time by class; nil when
	// turned off. dbTimeWriters says it samples the server's writers too.
	dbTime        *server.Activity
	dbTimeWriters bool
	// statsReads counts the calls of Stats, whose queries run in dbio's
	// database as transactions of their own.
	statsReads atomic.Int64
}

var _ engine.Instance = (*Instance)(nil)

// ownTransactions are the transactions the earlier calls of Stats
// committed in dbio's database (this call's are not committed yet): a
// query of the counters and one of the waits, each in autocommit. At one
// read a second they would count as 120 TPM no user ran. (The samples of
// database time, on a probe connection of their own, are not counted by
// the server: measured, ten a second left xact_commit unmoved.)
func (in *Instance) ownTransactions() float64 {
	perRead := int64(1)
	if in.waits.query != "" {
		perRead++
	}
	return float64((in.statsReads.Load() - 1) * perRead)
}

// Driver implements engine.Instance: the database/sql driver name of pgx.
func (in *Instance) Driver() string { return "pgx" }

var _ engine.StatsSource = (*Instance)(nil)

// Stats implements engine.StatsSource: cumulative counters of the database
// dbio owns (blocks found in shared buffers or read, commits, rollbacks), of
// the server (checkpoints, WAL bytes), when the server times its I/O, the
// reads, writes and syncs it waited for with the milliseconds it waited,
// and the seconds of database time by class (dbtime.go), whose sampling
// the first call starts.
func (in *Instance) Stats(ctx context.Context) (map[string]float64, error) {
	var hit, read, commit, rollback, checkpoints, wal float64
	in.statsReads.Add(1)
	err := in.StatsDB().QueryRowContext(ctx, in.statsQuery).Scan(&hit, &read, &commit, &rollback, &checkpoints, &wal)
	if err != nil {
		return nil, fmt.Errorf("postgres statistics: %w", err)
	}
	m := map[string]float64{
		"blks_hit":      hit,
		"blks_read":     read,
		"xact_commit":   commit,
		"xact_rollback": rollback,
		"checkpoints":   checkpoints,
		"wal_bytes":     wal,
		// A block found in shared_buffers is a hit; any other was read through the OS.
		engine.CacheHitReads:  hit,
		engine.CacheMissReads: read,
		// HammerDB's TPM sums these over every database; dbio's own is the
		// one its workload runs in, less the reads of these counters that
		// ran there, each a transaction of its own.
		engine.TransactionsEnded: commit + rollback - in.ownTransactions(),
	}
	if err := in.waits.read(ctx, in.StatsDB(), m); err != nil {
		return nil, err
	}
	if in.dbTime != nil {
		in.dbTime.Read(m)
	}
	return m, nil
}

// Stop implements engine.Instance: the sampling of database time ends
// before the connections close and a managed server stops.
func (in *Instance) Stop(ctx context.Context) error {
	if in.dbTime != nil {
		in.dbTime.Stop()
	}
	return in.Instance.Stop(ctx)
}

// statsQuery reads all counters in one round trip. Checkpoint counts moved
// to pg_stat_checkpointer in PostgreSQL 17; pg_stat_wal exists from 14, before
// which the WAL position since its origin is the byte count.
func statsQuery(versionNum int) string {
	checkpoints := "(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)"
	if versionNum >= 170000 {
		checkpoints = "(SELECT num_timed + num_requested FROM pg_stat_checkpointer)"
	}
	wal := "(SELECT wal_bytes FROM pg_stat_wal)"
	if versionNum < 140000 {
		wal = "(pg_current_wal_lsn() - '0/0'::pg_lsn)"
	}
	return `SELECT d.blks_hit::float8, d.blks_read::float8, d.xact_commit::float8, d.xact_rollback::float8, ` +
		checkpoints + `::float8, ` + wal + `::float8
FROM pg_stat_database d WHERE d.datname = current_database()`
}

// open connects the pools on dsn and reads what Info and Stats need from the
// server; the instance runs its client programs as the engine runs its server.
func (e *Engine) open(ctx context.Context, dsn string, maxConns int) (*Instance, error) {
	in := &Instance{Instance: server.Instance{Runner: e.Runner, BinDirs: e.SearchDirs()}}
	// dsn is accepted by pgx.ParseConfig, pgxpool.ParseConfig and sql.Open("pgx", ...).
	if err := in.OpenPools(dsn, func() (*sql.DB, error) { return sql.Open("pgx", dsn) }, maxConns); err != nil {
		return nil, err
	}
	var versionNum int
	if err := in.StatsDB().QueryRowContext(ctx, "SELECT current_setting('server_version'), current_setting('server_version_num')::int").
		Scan(&in.Facts.Version, &versionNum); err != nil {
		in.ClosePools()
		return nil, fmt.Errorf("connect to the dbio database: %w", err)
	}
	in.statsQuery = statsQuery(versionNum)
	io, wal, err := timingOn(ctx, in.StatsDB(), versionNum)
	if err != nil {
		in.ClosePools()
		return nil, fmt.Errorf("read the server's I/O timing settings: %w", err)
	}
	in.waits = waitsFor(versionNum, io, wal)
	return in, nil
}

// durabilityNote reads the settings that decide whether a commit survives a
// crash, so a report states them as the server had them.
func durabilityNote(ctx context.Context, db *sql.DB) (string, error) {
	var fsync, syncCommit, fpw string
	err := db.QueryRowContext(ctx, "SELECT current_setting('fsync'), current_setting('synchronous_commit'), current_setting('full_page_writes')").
		Scan(&fsync, &syncCommit, &fpw)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("durability: fsync=%s, synchronous_commit=%s, full_page_writes=%s", fsync, syncCommit, fpw), nil
}

// quoteIdent quotes a database name for SQL.
func quoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }
