package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

// shutdown asks the server to shut down (SIGTERM, as `mariadb-admin
// shutdown` does; InnoDB writes its dirty pages first) and kills it if it
// has not finished within server.StopGrace.
var shutdown = server.Shutdown{Signal: syscall.SIGTERM, Escalate: syscall.SIGKILL, Grace: server.StopGrace}

// Instance is a running MariaDB or MySQL database, managed or external.
type Instance struct {
	server.Instance

	// admin reaches the server with no database selected, to drop and
	// re-create dbio's database, and gives the client programs their account.
	admin *mysqldrv.Config

	// managed is set for a server dbio runs.
	managed *managedServer
	// dbTime accounts for database time by class (dbtime.go); nil when
	// turned off.
	dbTime *dbTime
}

var _ engine.Instance = (*Instance)(nil)

// Driver implements engine.Instance: go-sql-driver/mysql's name.
func (in *Instance) Driver() string { return "mysql" }

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

var statsQuery = statsMarker + "SHOW GLOBAL STATUS WHERE Variable_name IN ('" + strings.Join(statusCounters, "', '") + "')"

var _ engine.StatsSource = (*Instance)(nil)

// Stats implements engine.StatsSource: the server's status counters, the
// file I/O waits performance_schema timed (see readWaits) and the seconds
// of database time by class (dbtime.go), whose sampling the first call
// starts.
func (in *Instance) Stats(ctx context.Context) (map[string]float64, error) {
	rows, err := in.StatsDB().QueryContext(ctx, statsQuery)
	if err != nil {
		return nil, fmt.Errorf("%s statistics: %w", in.Facts.Engine, err)
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
			return nil, fmt.Errorf("%s statistics: %s = %q is not a number", in.Facts.Engine, name, value)
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
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// COMMIT and ROLLBACK statements, those inside procedures included:
	// the transactions HammerDB's TPM counts.
	commits, okC := m["Com_commit"]
	rollbacks, okR := m["Com_rollback"]
	if okC && okR {
		m[engine.TransactionsEnded] = commits + rollbacks
	}
	rows.Close() // the statistics pool has one connection, which readWaits needs
	if err := readWaits(ctx, in.StatsDB(), m); err != nil {
		return nil, err
	}
	if in.dbTime != nil {
		in.dbTime.read(m)
	}
	return m, nil
}

// Stop implements engine.Instance: the sampling of database time ends
// before the connections close and a managed server stops.
func (in *Instance) Stop(ctx context.Context) error {
	if in.dbTime != nil {
		in.dbTime.stop()
	}
	return in.Instance.Stop(ctx)
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

// open connects the pools for cfg and reads the server version; the instance
// runs its client programs as the engine runs its server.
func (e *Engine) open(ctx context.Context, cfg *mysqldrv.Config, maxConns int) (*Instance, error) {
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	in := &Instance{Instance: server.Instance{Runner: e.Runner, BinDirs: e.SearchDirs()}}
	// The DSN is go-sql-driver/mysql's, with multiStatements, interpolateParams
	// and parseTime on.
	if err := in.OpenPools(cfg.FormatDSN(), func() (*sql.DB, error) { return sql.OpenDB(connector), nil }, maxConns); err != nil {
		return nil, err
	}
	if err := in.StatsDB().QueryRowContext(ctx, "SELECT VERSION()").Scan(&in.Facts.Version); err != nil {
		in.ClosePools()
		return nil, fmt.Errorf("connect to the dbio database: %w", err)
	}
	in.Facts.Engine = string(mysql)
	if strings.Contains(in.Facts.Version, "MariaDB") {
		in.Facts.Engine = string(mariadb)
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
