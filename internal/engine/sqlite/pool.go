package sqlite

import (
	"database/sql"
	"fmt"
	"syscall"

	"dbio/internal/engine"
)

// SQLite's connections live in dbio's own process: there is no server to
// refuse one, so what bounds them is what each costs dbio and what more
// of them would measure. Each keeps two open files (the database and its
// WAL; the shared-memory index is opened once per process) and its own
// page cache, which fills to cache_size (2000 KiB by default: about
// 2.1 MiB of resident memory a connection once it has read that much).
// And SQLite admits one writer at a time: past a few users per core, every
// user more only lengthens the queue for the write lock, so a run of
// thousands measures that queue, not the storage.
const (
	// connectionCeiling is the most connections a run may ask of one SQLite
	// database: room for AS3AP's default climb to 500 users beside its
	// batch jobs, with page caches of about 2 GiB at SQLite's default
	// cache_size, and far past the users at which SQLite's throughput stops
	// rising.
	connectionCeiling = 1024
	// filesPerConnection are the database file and its WAL.
	filesPerConnection = 2
	// filesKeptForDBIO are the open files left to dbio beside the
	// connections: results files, its programs' pipes, ssh sessions, the
	// connections of loaders, checks, backups and batch jobs.
	filesKeptForDBIO = 1024
)

var _ engine.ConnectionLimit = Engine{}

// MaxConnections implements engine.ConnectionLimit, so that the preflight
// refuses a run whose users SQLite cannot serve (with exit 2, before
// anything is written) rather than let it fail or crawl once started:
// connectionCeiling, or fewer when dbio's open-file limit cannot hold them.
func (Engine) MaxConnections(engine.Options) (int, string) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return connectionLimit(0)
	}
	return connectionLimit(lim.Cur)
}

// OwnConnections implements engine.ConnectionLimit: dbio reads no
// counters of SQLite's on a connection, so it holds none beside the users'.
func (Engine) OwnConnections(engine.Options) (int, string) { return 0, "" }

// connectionLimit is MaxConnections for a process allowed openFiles open
// files (0: unknown), and why.
func connectionLimit(openFiles uint64) (int, string) {
	ceiling := fmt.Sprintf("SQLite's ceiling in dbio: each connection keeps its own page cache (cache_size, about 2 MiB by default) and %d open files in dbio's process, and past a few users per core more users only queue for SQLite's one write lock, which is what a run of thousands would measure", filesPerConnection)
	if openFiles == 0 || openFiles >= filesKeptForDBIO+connectionCeiling*filesPerConnection {
		return connectionCeiling, ceiling
	}
	n := 0
	if openFiles > filesKeptForDBIO {
		n = int((openFiles - filesKeptForDBIO) / filesPerConnection)
	}
	return n, fmt.Sprintf("dbio's open-file limit of %d (ulimit -n) less %d kept for its own files, at %d a SQLite connection: raise the limit (ulimit -n %d) for up to %d", openFiles, filesKeptForDBIO, filesPerConnection, filesKeptForDBIO+connectionCeiling*filesPerConnection, connectionCeiling)
}

// sizePool lets the pool open a connection for every session that asks:
// each user's session, background job, loader and check holds one of its
// own for as long as it runs, and database/sql makes a caller beyond a
// bounded pool wait until its context ends, which for a session of a
// timed step is never. The users are bounded before the run instead
// (MaxConnections); Options.MaxConns, which bounds a server engine's pool,
// is not honoured here for the same reason. The idle connections kept are
// as many as the ceiling, so that a step's sessions find their connections
// open at the next step.
func sizePool(db *sql.DB) {
	db.SetMaxOpenConns(0)
	db.SetMaxIdleConns(connectionCeiling)
}
