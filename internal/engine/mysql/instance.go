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
	"syscall"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
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

	// Managed servers only.
	proc       *server.Process
	procRoot   string
	tempSocket string

	stopOnce sync.Once
	stopErr  error
}

var (
	_ engine.Instance    = (*Instance)(nil)
	_ engine.StatsSource = (*Instance)(nil)
	_ engine.Processes   = (*Instance)(nil)
	_ engine.Exited      = (*Instance)(nil)
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
		// Closing a pool fails only in saying goodbye to a server that is
		// already gone, which Exited reports; it is not a failure to stop.
		_, _ = in.db.Close(), in.stats.Close()
		var errs []error
		if in.proc != nil {
			errs = append(errs, in.proc.Stop(ctx, syscall.SIGTERM, syscall.SIGKILL, stopGrace))
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
	return m, rows.Err()
}

// PIDs implements engine.Processes: the server process (one process, many
// threads). An external server has none dbio can see.
func (in *Instance) PIDs() []int {
	if in.proc == nil {
		return nil
	}
	pids, err := server.Tree(in.procRoot, in.proc.PID())
	if err != nil {
		return nil
	}
	return pids
}

// Exited implements engine.Exited. For an external server it never yields.
func (in *Instance) Exited() <-chan error {
	if in.proc == nil {
		return nil
	}
	return in.proc.Exited()
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
	in := &Instance{db: db, stats: stats, dsn: cfg.FormatDSN()}
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
