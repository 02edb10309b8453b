package postgres

import (
	"fmt"
	"strings"

	"dbio/internal/engine"
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

// Building an index sorts in each backend's own memory, up to
// maintenance_work_mem, which dbio's load raises to 256 MB for sorts that
// stay in memory: two index builds at once (the order lines' primary key
// and the stock's, at 4 warehouses 100 MB of sort between them) beside
// 64 MB of shared buffers overran a 200 MB cap about one load in two, and
// the kernel killed a backend (the load's "conn closed"). Under a cap the
// server's own configuration sizes it instead, which the load then keeps:
// a quarter of what the cap leaves beside shared memory, the server's
// processes and capSortConnections connections, so that two builds sort
// within it (spilling the rest to temporary files, which the load writes
// at the device's own speed) and leave as much again to the page cache
// they read the table through.
const (
	capSortConnections = 4
	capSortFloor       = 1 << 20
	capSortCeiling     = 256 << 20 // what the load sets when the server leaves it
)

// capSortSetting is maintenance_work_mem for a server under the memory cap
// o.ServerMemory, nil without one or when the cap leaves room for the
// load's own 256 MB (the server then runs with PostgreSQL's default, as
// without a cap).
func capSortSetting(e *Engine, o engine.Options) []server.Setting {
	if o.ServerMemory <= 0 {
		return nil
	}
	need, _ := e.MemoryNeed(o, capSortConnections)
	sort := max((o.ServerMemory-need)/4, capSortFloor)
	if sort >= capSortCeiling {
		return nil
	}
	return []server.Setting{{Name: "maintenance_work_mem", Value: pgSize(sort &^ (1<<10 - 1)),
		Why: fmt.Sprintf("--server-memory %s: index builds sort within a quarter of what the cap leaves beside shared memory, the processes and %d connections", units.FormatBytes(uint64(o.ServerMemory)), capSortConnections)}}
}
