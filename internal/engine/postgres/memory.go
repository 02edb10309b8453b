package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/secret"
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
// connects as the DSN says (to the postgres database when the DSN names
// the one dbio would create, which may not exist yet), reads
// max_connections and disconnects.
func (e *Engine) ExternalMaxConnections(ctx context.Context, o engine.Options) (int, error) {
	cfg, _, err := dsns.External(o)
	if err != nil {
		return 0, err
	}
	if pw := passwordFromEnv(o); pw != "" && len(secret.Values(o.DSN)) == 0 {
		cfg.Password = pw
	}
	if cfg.Database == server.Database(o) {
		cfg.Database = "postgres"
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int
	err = conn.QueryRow(ctx, "SELECT current_setting('max_connections')::int").Scan(&n)
	return n, err
}

// What a PostgreSQL server holds beside its shared buffers, as measured in
// a memory cgroup on PostgreSQL 15 with dbio's settings (max_connections
// 300): about 15 MB of other shared memory (lock tables, the WAL buffers'
// neighbours, per-connection slots), about 10 MB for the postmaster and its
// background processes, and 3 to 4 MB for each backend once it has run
// TPC-C's statements.
const (
	pgDefaultSharedBuffers = 128 << 20
	pgOtherShared          = 16 << 20
	pgProcesses            = 16 << 20
	pgPerConnection        = 4 << 20
)

// MemoryNeed implements engine.MemoryNeeds: shared_buffers (the buffer
// pool, or an explicit setting), the WAL buffers (1/32 of it, at most
// 16 MB), the rest of shared memory and the processes, and each connection.
func (e *Engine) MemoryNeed(o engine.Options, conns int) (int64, string) {
	pool := int64(pgDefaultSharedBuffers)
	what := "the default 128 MB of shared_buffers"
	if o.BufferPool > 0 {
		pool, what = o.BufferPool, units.FormatBytes(uint64(o.BufferPool))+" of shared_buffers"
	}
	if v, ok := settingNames.Value(o.Settings, "shared_buffers"); ok {
		if n, err := units.ParseBytes(v); err == nil && n > 0 {
			// A bare number counts 8 kB blocks, as PostgreSQL reads
			// this setting.
			if strings.TrimLeft(strings.TrimSpace(v), "0123456789") == "" {
				n *= 8 << 10
			}
			pool, what = n, units.FormatBytes(uint64(n))+" of shared_buffers (setting)"
		}
	}
	wal := min(pool/32, 16<<20)
	need := pool + wal + pgOtherShared + pgProcesses + int64(conns)*pgPerConnection
	return need, fmt.Sprintf("%s + %s of WAL buffers + %s of other shared memory and server processes + %d connections × %s",
		what, units.FormatBytes(uint64(wal)), units.FormatBytes(pgOtherShared+pgProcesses), conns, units.FormatBytes(pgPerConnection))
}
