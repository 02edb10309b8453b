package postgres

import (
	"strings"

	"dbio/internal/engine/server"
	"dbio/internal/units"
)

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

// memory is what MemoryNeed counts: shared_buffers (the buffer pool, or an
// explicit setting), the WAL buffers (1/32 of it, at most 16 MB), the rest
// of shared memory and the processes, and each connection.
var memory = server.Memory{
	Pool: server.BufferPool{
		Setting: "shared_buffers", Names: settingNames,
		// A bare number counts 8 kB blocks, as PostgreSQL reads this setting.
		Parse:   func(v string) (int64, error) { return parseSize(v, 8<<10) },
		Default: pgDefaultSharedBuffers, DefaultWords: "the default 128 MB of shared_buffers", Of: "of shared_buffers",
	},
	Beside: func(pool int64) []server.MemoryPart {
		return []server.MemoryPart{
			{Bytes: min(pool/32, 16<<20), Of: "of WAL buffers"},
			{Bytes: pgOtherShared + pgProcesses, Of: "of other shared memory and server processes"},
		}
	},
	PerConnection: pgPerConnection,
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
