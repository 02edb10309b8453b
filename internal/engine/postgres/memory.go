package postgres

import (
	"fmt"
	"strings"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/units"
)

var _ engine.MemoryNeeds = (*Engine)(nil)

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
	pool, what := sharedBuffers.Size(o)
	wal := min(pool/32, 16<<20)
	need := pool + wal + pgOtherShared + pgProcesses + int64(conns)*pgPerConnection
	return need, fmt.Sprintf("%s + %s of WAL buffers + %s of other shared memory and server processes + %d connections × %s",
		what, units.FormatBytes(uint64(wal)), units.FormatBytes(pgOtherShared+pgProcesses), conns, units.FormatBytes(pgPerConnection))
}

// sharedBuffers is PostgreSQL's buffer pool as MemoryNeed counts it.
var sharedBuffers = server.BufferPool{
	Setting: "shared_buffers", Names: settingNames,
	// A bare number counts 8 kB blocks, as PostgreSQL reads this setting.
	Parse:   func(v string) (int64, error) { return parseSize(v, 8<<10) },
	Default: pgDefaultSharedBuffers, DefaultWords: "the default 128 MB of shared_buffers", Of: "of shared_buffers",
}

// parseSize reads a size setting as PostgreSQL does: a number with a unit
// as written, a bare number in the setting's own unit (bare).
func parseSize(v string, bare int64) (int64, error) {
	n, err := units.ParseBytes(v)
	if err == nil && strings.TrimLeft(strings.TrimSpace(v), "0123456789") == "" {
		n *= bare
	}
	return n, err
}
