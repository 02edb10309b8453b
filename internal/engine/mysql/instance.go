package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
)

// stopGrace is how long a clean shutdown may take before the server is
// killed: InnoDB writes its dirty pages first, which on a slow disk with a
// large buffer pool takes a while.
const stopGrace = 3 * time.Minute

// Instance is a running MariaDB or MySQL database, managed or external.
type Instance struct {
	db    *sql.DB
	stats *sql.DB
	dsn   string
	info  engine.Info

	// idle is how many idle connections db keeps.
	idle int
	// admin reaches the server with no database selected, to drop and
	// re-create dbio's database, and gives the client programs their account.
	admin *mysqldrv.Config
	// runner runs the client and backup programs, found in binDirs or PATH.
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

// Driver implements engine.Instance: go-sql-driver/mysql's name.
func (in *Instance) Driver() string { return "mysql" }

// DSN implements engine.Instance: a go-sql-driver/mysql DSN for the database
// dbio owns, with multiStatements, interpolateParams and parseTime on.
func (in *Instance) DSN() string { return in.dsn }

// Info implements engine.Instance.
func (in *Instance) Info() engine.Info { return in.info }

// Stop implements engine.Instance: it closes dbio's connections and, for a
// managed server, asks it to shut down (SIGTERM, as `mariadb-admin shutdown`
// does) and waits, killing it if it has not finished within stopGrace.
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
			errs = append(errs, p.Stop(ctx, syscall.SIGTERM, syscall.SIGKILL, stopGrace))
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

// statusCounters are the cumulative server counters Stats reports: buffer
// pool misses and requests, redo writes and bytes, fsyncs, commits.
var statusCounters = []string{
	"Innodb_buffer_pool_reads",
	"Innodb_buffer_pool_read_requests",
	"Innodb_log_writes",
	"Innodb_os_log_written",
	"Innodb_data_fsyncs",
	"Innodb_data_written",
	"Com_commit",
	"Com_rollback",
}

var statsQuery = "SHOW GLOBAL STATUS WHERE Variable_name IN ('" + strings.Join(statusCounters, "', '") + "')"

// Stats implements engine.StatsSource.
func (in *Instance) Stats(ctx context.Context) (map[string]float64, error) {
	rows, err := in.stats.QueryContext(ctx, statsQuery)
	if err != nil {
		return nil, fmt.Errorf("%s statistics: %w", in.info.Engine, err)
	}
	defer rows.Close()
	m := make(map[string]float64, len(statusCounters))
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("%s statistics: %s = %q is not a number", in.info.Engine, name, value)
		}
		m[name] = v
	}
	// Read requests are logical page reads; reads are those the buffer pool
	// could not serve and sent to the OS.
	if req, ok := m["Innodb_buffer_pool_read_requests"]; ok {
		miss := m["Innodb_buffer_pool_reads"]
		m[engine.CacheHitReads] = max(req-miss, 0)
		m[engine.CacheMissReads] = miss
	}
	return m, rows.Err()
}

// PIDs implements engine.Processes: the server process (one process, many
// threads). An external server has none dbio can see.
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

// workloadConfig turns a driver configuration into the one workloads get.
func workloadConfig(cfg *mysqldrv.Config, database string) *mysqldrv.Config {
	c := cfg.Clone()
	c.DBName = database
	c.MultiStatements = true
	c.InterpolateParams = true
	c.ParseTime = true
	// Broken connections come back as errors; the driver's own log would
	// write them to dbio's terminal a second time.
	c.Logger = quietLogger{}
	return c
}

// open connects the pools for cfg and reads the server version.
func open(ctx context.Context, cfg *mysqldrv.Config, maxConns int) (*Instance, error) {
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	idle := maxConns
	if maxConns > 0 {
		db.SetMaxOpenConns(maxConns)
	} else {
		idle = 300
	}
	// database/sql keeps only two idle connections by default; with many users
	// that would reconnect on every transaction and measure connection setup.
	db.SetMaxIdleConns(idle)
	stats := sql.OpenDB(connector)
	// Counters are sampled on their own connection, so a saturated pool never delays a sample.
	stats.SetMaxOpenConns(1)
	in := &Instance{db: db, stats: stats, dsn: cfg.FormatDSN(), idle: idle}
	if err := stats.QueryRowContext(ctx, "SELECT VERSION()").Scan(&in.info.Version); err != nil {
		db.Close()
		stats.Close()
		return nil, fmt.Errorf("connect to the dbio database: %w", err)
	}
	in.info.Engine = string(mysql)
	if strings.Contains(in.info.Version, "MariaDB") {
		in.info.Engine = string(mariadb)
	}
	return in, nil
}

// durabilityNote reads the settings that decide whether a commit survives a
// crash, so a report states them as the server had them.
func durabilityNote(ctx context.Context, db *sql.DB) (string, error) {
	var flush, doublewrite, syncBinlog, logBin string
	err := db.QueryRowContext(ctx, "SELECT @@innodb_flush_log_at_trx_commit, @@innodb_doublewrite, @@sync_binlog, @@log_bin").
		Scan(&flush, &doublewrite, &syncBinlog, &logBin)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("durability: innodb_flush_log_at_trx_commit=%s, innodb_doublewrite=%s, log_bin=%s, sync_binlog=%s", flush, doublewrite, logBin, syncBinlog), nil
}

// quoteIdent quotes a database name for SQL.
func quoteIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// quietLogger discards go-sql-driver/mysql's log.
type quietLogger struct{}

func (quietLogger) Print(...any) {}
