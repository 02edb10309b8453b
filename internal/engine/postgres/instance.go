package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
)

// stopGrace is how long a fast shutdown may take before the server is
// killed: it ends with a checkpoint, which on a slow disk with a large
// shared_buffers takes a while.
const stopGrace = 3 * time.Minute

// Instance is a running PostgreSQL database, managed or external.
type Instance struct {
	db    *sql.DB
	stats *sql.DB
	dsn   string
	info  engine.Info
	// statsQuery reads the cumulative counters; it depends on the server version.
	statsQuery string

	// idle is how many idle connections db keeps.
	idle int
	// admin reaches a database other than dbio's on the same server, to drop
	// and re-create dbio's database for a logical restore.
	admin *pgx.ConnConfig
	// tools is how pg_dump and pg_restore reach dbio's database.
	tools toolConn
	// runner runs the client programs, found in binDirs or PATH.
	runner  execx.Runner
	binDirs []string

	// Managed servers only. proc changes when a restore restarts the server.
	managed    *managedServer
	proc       atomic.Pointer[server.Process]
	procRoot   string
	tempSocket string
	// exited outlives the server processes a restore replaces.
	exited   chan error
	watching sync.WaitGroup

	// ops serializes restores with each other and with Stop.
	ops      sync.Mutex
	closed   bool
	stopOnce sync.Once
	stopErr  error
}

var (
	_ engine.Instance        = (*Instance)(nil)
	_ engine.StatsSource     = (*Instance)(nil)
	_ engine.Processes       = (*Instance)(nil)
	_ engine.Exited          = (*Instance)(nil)
	_ engine.Backuper        = (*Instance)(nil)
	_ engine.LogicalBackuper = (*Instance)(nil)
)

// DB implements engine.Instance: a pool on the database dbio owns.
func (in *Instance) DB() *sql.DB { return in.db }

// Driver implements engine.Instance: the database/sql driver name of pgx.
func (in *Instance) Driver() string { return "pgx" }

// DSN implements engine.Instance: a connection string for the database dbio
// owns, accepted by pgx.ParseConfig, pgxpool.ParseConfig and sql.Open("pgx", ...).
func (in *Instance) DSN() string { return in.dsn }

// Info implements engine.Instance.
func (in *Instance) Info() engine.Info { return in.info }

// Stop implements engine.Instance: it closes dbio's connections and, for a
// managed server, performs a fast shutdown (SIGINT, what `pg_ctl stop -m fast`
// sends: sessions are ended, a checkpoint is written), escalating to an
// immediate shutdown and then SIGKILL if it does not finish within stopGrace.
func (in *Instance) Stop(ctx context.Context) error {
	in.stopOnce.Do(func() {
		in.ops.Lock()
		defer in.ops.Unlock()
		in.closed = true
		// Closing a pool fails only in saying goodbye to a server that is
		// already gone, which Exited reports; it is not a failure to stop.
		_, _ = in.db.Close(), in.stats.Close()
		var errs []error
		if p := in.proc.Load(); p != nil {
			errs = append(errs, p.Stop(ctx, syscall.SIGINT, syscall.SIGQUIT, stopGrace))
			select {
			case <-p.Done():
				in.watching.Wait()
				close(in.exited)
			default: // it outlived SIGKILL; its watcher may still report its end
			}
		}
		if in.tempSocket != "" {
			errs = append(errs, os.RemoveAll(in.tempSocket))
		}
		in.stopErr = errors.Join(errs...)
	})
	return in.stopErr
}

// Stats implements engine.StatsSource: cumulative counters of the database
// dbio owns (blocks found in shared buffers or read, commits, rollbacks) and of
// the server (checkpoints, WAL bytes).
func (in *Instance) Stats(ctx context.Context) (map[string]float64, error) {
	var hit, read, commit, rollback, checkpoints, wal float64
	err := in.stats.QueryRowContext(ctx, in.statsQuery).Scan(&hit, &read, &commit, &rollback, &checkpoints, &wal)
	if err != nil {
		return nil, fmt.Errorf("postgres statistics: %w", err)
	}
	return map[string]float64{
		"blks_hit":      hit,
		"blks_read":     read,
		"xact_commit":   commit,
		"xact_rollback": rollback,
		"checkpoints":   checkpoints,
		"wal_bytes":     wal,
		// A block found in shared_buffers is a hit; any other was read through the OS.
		engine.CacheHitReads:  hit,
		engine.CacheMissReads: read,
	}, nil
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

// PIDs implements engine.Processes: the postmaster and its children
// (backends, checkpointer, WAL writer...). An external server has none dbio can see.
func (in *Instance) PIDs() []int {
	p := in.proc.Load()
	if p == nil {
		return nil
	}
	pids, err := server.Tree(in.procRoot, p.PID())
	if err != nil {
		return nil
	}
	return pids
}

// Exited implements engine.Exited: it yields once when the server ends
// without Stop (or a restore) having stopped it, and is closed by Stop. A
// restore restarts the server behind the same channel. For an external
// server it never yields.
func (in *Instance) Exited() <-chan error {
	if in.managed == nil {
		return nil
	}
	return in.exited
}

// stopped says whether Stop was called; the caller holds ops.
func (in *Instance) stopped() bool { return in.closed }

// watch makes p the instance's server and passes on its unexpected end.
func (in *Instance) watch(p *server.Process) {
	if in.exited == nil {
		in.exited = make(chan error, 1)
	}
	in.proc.Store(p)
	in.watching.Add(1)
	go func() {
		defer in.watching.Done()
		if err, ok := <-p.Exited(); ok {
			select {
			case in.exited <- err:
			default: // an earlier end is still unread
			}
		}
	}()
}

// dropIdle closes the pools' idle connections, which a server restart or a
// dropped database has made useless, so that the next query opens a new one
// instead of failing on a dead one.
func (in *Instance) dropIdle() {
	in.db.SetMaxIdleConns(0)
	in.db.SetMaxIdleConns(in.idle)
	in.stats.SetMaxIdleConns(0)
	in.stats.SetMaxIdleConns(1)
}

// open connects the pools on dsn and reads what Info and Stats need from the server.
func open(ctx context.Context, dsn string, maxConns int) (*Instance, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	idle := maxConns
	if maxConns > 0 {
		db.SetMaxOpenConns(maxConns)
	} else {
		idle = 300
	}
	// database/sql keeps only two idle connections by default; with many users
	// that would reconnect on every transaction and measure connection setup.
	db.SetMaxIdleConns(idle)
	stats, err := sql.Open("pgx", dsn)
	if err != nil {
		db.Close()
		return nil, err
	}
	// Counters are sampled on their own connection, so a saturated pool never delays a sample.
	stats.SetMaxOpenConns(1)
	in := &Instance{db: db, stats: stats, dsn: dsn, idle: idle}
	var versionNum int
	if err := stats.QueryRowContext(ctx, "SELECT current_setting('server_version'), current_setting('server_version_num')::int").
		Scan(&in.info.Version, &versionNum); err != nil {
		db.Close()
		stats.Close()
		return nil, fmt.Errorf("connect to the dbio database: %w", err)
	}
	in.statsQuery = statsQuery(versionNum)
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
