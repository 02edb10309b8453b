package mysql

import (
	"dbio/internal/engine/server"
	"dbio/internal/units"
)

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

// memory is what MemoryNeed counts: innodb_buffer_pool_size (the buffer
// pool, or an explicit setting), the server's fixed memory and each
// connection's.
var memory = server.Memory{
	Pool: server.BufferPool{
		Setting: "innodb_buffer_pool_size", Names: settingNames, Parse: units.ParseBytes,
		Default: innodbDefaultPool, DefaultWords: "the default 128 MB buffer pool", Of: "of buffer pool",
	},
	Beside: func(int64) []server.MemoryPart {
		return []server.MemoryPart{{Bytes: mariadbFixed, Of: "of redo log buffer, other server memory and performance_schema"}}
	},
	PerConnection: mariadbPerConnection,
}
