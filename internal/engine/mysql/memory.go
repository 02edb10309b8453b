package mysql

import (
	"context"
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/units"
)

var (
	_ engine.MemoryNeeds         = (*Engine)(nil)
	_ engine.ConnectionLimit     = (*Engine)(nil)
	_ engine.ExternalConnections = (*Engine)(nil)
)

// MaxConnections implements engine.ConnectionLimit.
func (e *Engine) MaxConnections(o engine.Options) (int, string) {
	return settingNames.ConfiguredMaxConnections(o.Settings, o.MaxConns)
}

// ExternalMaxConnections implements engine.ExternalConnections: it
// connects as the DSN says, without a database (the one dbio would create
// may not exist yet), reads max_connections and disconnects.
func (e *Engine) ExternalMaxConnections(ctx context.Context, o engine.Options) (int, error) {
	cfg, _, err := dsns.External(o)
	if err != nil {
		return 0, err
	}
	if cfg.Passwd == "" && o.Getenv != nil {
		cfg.Passwd = o.Getenv(PasswordEnv)
	}
	cfg.DBName = ""
	cfg.Logger = quietLogger{}
	db, err := openAdmin(cfg)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "SELECT @@max_connections").Scan(&n)
	return n, err
}

// What a MariaDB server holds beside its buffer pool, as measured in a
// memory cgroup on MariaDB 10.11 with dbio's settings (max_connections
// 300): about 100 MB at start (the redo log buffer, InnoDB's other
// structures, the server's caches and threads), about 20 MB of
// performance_schema as dbio sizes it, and 2 to 3 MB for each connection
// running TPC-C.
const (
	innodbDefaultPool    = 128 << 20
	mariadbFixed         = 120 << 20
	mariadbPerConnection = 3 << 20
)

// MemoryNeed implements engine.MemoryNeeds: innodb_buffer_pool_size (the
// buffer pool, or an explicit setting), the server's fixed memory and each
// connection's.
func (e *Engine) MemoryNeed(o engine.Options, conns int) (int64, string) {
	pool := int64(innodbDefaultPool)
	what := "the default 128 MB buffer pool"
	if o.BufferPool > 0 {
		pool, what = o.BufferPool, units.FormatBytes(uint64(o.BufferPool))+" of buffer pool"
	}
	if v, ok := settingNames.Value(o.Settings, "innodb_buffer_pool_size"); ok {
		if n, err := units.ParseBytes(v); err == nil && n > 0 {
			pool, what = n, units.FormatBytes(uint64(n))+" of buffer pool (setting)"
		}
	}
	need := pool + mariadbFixed + int64(conns)*mariadbPerConnection
	return need, fmt.Sprintf("%s + %s of redo log buffer, other server memory and performance_schema + %d connections × %s",
		what, units.FormatBytes(mariadbFixed), conns, units.FormatBytes(mariadbPerConnection))
}
