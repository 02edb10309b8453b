// Package engine defines what a database engine under test is to dbio: something
// that starts an instance on a placement of targets and hands back a database
// handle, and a registry of engines by name so that the runner and the CLI
// never switch on an engine's name.
package engine

import (
	"context"
	"database/sql"

	"dbio/internal/execx"
	"dbio/internal/registry"
	"dbio/internal/results"
	"dbio/internal/target"
)

// Placement says where an instance keeps its files. Log and Backup default to Data.
type Placement struct {
	Data   *target.Target
	Log    *target.Target
	Backup *target.Target
}

// LogTarget is the target for the WAL / redo log: Log when given, else Data.
func (p Placement) LogTarget() *target.Target {
	if p.Log != nil {
		return p.Log
	}
	return p.Data
}

// Options are the engine settings a user controls. Durability settings stay at
// the engine's safe defaults unless Settings changes them explicitly.
type Options struct {
	// BufferPool is the engine's page cache in bytes (shared_buffers,
	// innodb_buffer_pool_size, SQLite cache_size); 0 keeps the engine default.
	BufferPool int64
	// ServerMemory caps a managed server's whole memory in bytes, its share
	// of the operating system's page cache included (a memory cgroup the
	// runner creates and starts the server in, through Wrap); 0 leaves it
	// uncapped. It is apart from BufferPool: a study of memory sets both,
	// as a machine with less memory would have both smaller.
	ServerMemory int64
	// Settings are explicit engine settings, name to value, applied as given.
	Settings map[string]string
	// DSN selects external mode: connect to an existing server, manage no lifecycle.
	DSN string
	// Getenv reads the process environment, where an external server's
	// engine finds its driver's usual password variable (PGPASSWORD,
	// MYSQL_PWD) when the DSN carries no password; nil reads nothing.
	Getenv func(string) string
	// Database is the database (schema) dbio creates and owns, e.g. "dbio_tpcc".
	Database string
	// Transport is "socket" (default for managed servers) or "tcp".
	Transport string
	// LogDir receives the server's own log, normally inside the results directory.
	LogDir string
	// MaxConns bounds the connection pool; 0 lets the engine choose.
	MaxConns int
	// Fresh asks for an empty database: a managed instance re-creates its own
	// files; in external mode the owned database is dropped and re-created.
	Fresh bool
	// Preallocate, when positive, asks the engine to reserve about this many
	// bytes for its data and log files up front (where it can), so they grow
	// into contiguous space instead of fragmenting; each engine records what
	// it did. PreallocateAuto lets the runner size it from the workload.
	Preallocate int64
	// Wrap, when set, wraps the managed server's command line; storage-class
	// emulation uses it to start the server inside a block-I/O cgroup, so
	// that not one of its I/Os escapes the limits. The wrapper keeps the PID
	// (it execs the server).
	Wrap func(execx.Cmd) execx.Cmd
	// RunAs receives the uid and gid a managed server will run as, before it
	// starts, so that a wrapper can give that user what it needs.
	RunAs func(uid, gid uint32) error
	// Notice, when set, receives what a managed engine did on its own that
	// the user must hear of at once, such as stopping a server an earlier
	// dbio left running on the target; the runner prints it and records it
	// in the run's notes.
	Notice func(msg string)
}

// PreallocateAuto asks the runner to preallocate what the workload says it needs.
const PreallocateAuto = -1

// Capabilities are what an engine can do, so workloads adapt without type switches.
type Capabilities struct {
	// ServerProcess: the engine runs as a separate server whose CPU and memory can be sampled.
	ServerProcess bool
	// StoredProcedures: transactions can run server-side in one round trip.
	StoredProcedures bool
	// SelectForUpdate: row locks can be taken with SELECT ... FOR UPDATE.
	SelectForUpdate bool
	// SingleWriter: one write transaction at a time per database (SQLite).
	SingleWriter bool
}

// Engine starts instances of one database engine.
type Engine interface {
	Name() string
	Capabilities() Capabilities
	Start(ctx context.Context, p Placement, o Options) (Instance, error)
}

// Instance is a running (or reachable) database.
type Instance interface {
	// DB is a pooled handle to the database dbio owns on this instance.
	DB() *sql.DB
	// Driver and DSN let a workload open its own connections, e.g. a native
	// pgx pool for COPY and batching.
	Driver() string
	DSN() string
	// Info is what the instance is and every setting that differs from the
	// engine's defaults, as the results record it.
	Info() results.EngineInfo
	// Stop closes connections and, for a managed server, shuts it down cleanly.
	Stop(ctx context.Context) error
}

// Backuper is implemented by instances with a native backup and restore
// path: physical for server engines (pg_basebackup, mariadb-backup; managed
// servers only), the online backup API for SQLite. Backup copies the running
// instance into dst, a new or empty directory, while the workload may go on;
// Restore replaces the instance's content with the backup at src (a
// BackupResult.Path) and leaves the instance running and reachable through
// the same DB handle; stop the workload first.
type Backuper interface {
	Backup(ctx context.Context, dst string) (BackupResult, error)
	Restore(ctx context.Context, src string) error
}

// LogicalBackuper is implemented by instances that can also dump the
// database dbio owns with the engine's logical tools (pg_dump, mariadb-dump)
// and load it back. Unlike Backuper's physical copy, which needs the
// server's own files, it works on external servers (--dsn) too.
// RestoreLogical drops and re-creates dbio's database before loading src (a
// file BackupLogical wrote, or its directory); stop the workload first.
type LogicalBackuper interface {
	BackupLogical(ctx context.Context, dst string) (BackupResult, error)
	RestoreLogical(ctx context.Context, src string) error
}

// BackupResult is what one backup produced: the tool (with the options that
// shape its cost), where the backup is (what Restore takes), and the bytes
// it wrote there.
type BackupResult struct {
	Tool  string `json:"tool"`
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// StatsSource is implemented by instances that expose engine counters
// (buffer hits and reads, checkpoints, WAL bytes...). Counters are cumulative;
// samplers take deltas. Beside its own names, an engine reports the two
// counters cache accounting compares across engines: CacheHitReads (page
// reads its cache served) and CacheMissReads (page reads it asked of the OS),
// and TransactionsEnded.
type StatsSource interface {
	Stats(ctx context.Context) (map[string]float64, error)
}

// Engine-neutral counter names for cache accounting.
const (
	CacheHitReads  = "cache_hit_reads"
	CacheMissReads = "cache_miss_reads"
)

// TransactionsEnded is the engine-neutral counter of transactions the
// server committed or rolled back, whichever statement or call ran them:
// the counter HammerDB reads for its TPM (PostgreSQL's xact_commit plus
// xact_rollback, MariaDB's Com_commit plus Com_rollback).
const TransactionsEnded = "transactions_ended"

// MemoryNeeds is implemented by server engines that can say how much memory
// their server needs at least to start with the given options and serve
// conns connections (its buffer pool, shared memory, its own processes or
// threads and each connection's), so that a memory cap it could not run in
// is refused before anything runs. Explain shows the sum.
type MemoryNeeds interface {
	MemoryNeed(o Options, conns int) (bytes int64, explain string)
}

// ConnectionLimit is implemented by server engines: how many connections a
// server they manage with o accepts (its max_connections) and where that
// figure comes from, so that a run needing more is refused before it starts.
type ConnectionLimit interface {
	MaxConnections(o Options) (limit int, from string)
	// OwnConnections is how many connections dbio itself holds on the
	// server beside the users' while they run, and what for, to complete
	// "and the 2 dbio reads ... on" ("the server's counters and its
	// database time"); 0 for an engine that keeps none.
	OwnConnections(o Options) (n int, what string)
}

// ExternalConnections is implemented by server engines: the
// max_connections of the existing server o.DSN reaches, as it says, asked
// on a connection of its own that creates nothing on the server, so that a
// run needing more is refused before it writes anything.
type ExternalConnections interface {
	ExternalMaxConnections(ctx context.Context, o Options) (int, error)
}

// SpaceNeeds is implemented by engines whose own files take space beside
// the workload's data: a redo log created at its full size, WAL kept
// between checkpoints, system tablespaces and catalogs. The space preflight
// adds them to the data's estimate (data bytes), so that a target too
// small for them is refused before anything is written rather than
// filled in the middle of a load.
type SpaceNeeds interface {
	SpaceNeed(o Options, data uint64) []EngineFiles
}

// EngineFiles is space an engine's own files take.
type EngineFiles struct {
	// What names them with their size's source, for the refusal:
	// "MariaDB's redo log (innodb_log_file_size)".
	What  string
	Bytes uint64
	// OnLog says they are written to the log target when there is one.
	OnLog bool
}

// Processes is implemented by server instances so telemetry can sample their CPU and RSS.
type Processes interface {
	PIDs() []int
}

// Exited is implemented by managed servers: the channel yields once when the
// server process ends, so a run can stop at once when its database crashes.
type Exited interface {
	Exited() <-chan error
}

// Registry is the engines dbio offers, by every name each answers to,
// listed in the order they are registered.
type Registry struct {
	*registry.Registry[Engine]
}

// NewRegistry returns an empty registry; package engines fills one with
// dbio's engines, tests build their own.
func NewRegistry() *Registry { return &Registry{registry.New[Engine]("engine")} }

// Register adds e under its name. Two engines with one name are a programming error.
func (r *Registry) Register(e Engine) { r.Add(e.Name(), e) }

// OwnFiles is implemented by instances whose files dbio keeps on its
// targets: the files and directories that are this instance's alone (a
// SQLite database and its WAL; a managed server's data and log
// directories), so that what a run measures of its files (their
// fragmentation) leaves out other instances kept on the same target.
type OwnFiles interface {
	OwnFiles() []string
}

// ServerPlaces is implemented by the instances of an existing server
// (--dsn): where its data and its log are, when it runs on this host and
// says ("" otherwise), so that the devices behind them are watched as a
// managed server's targets are.
type ServerPlaces interface {
	ServerDirs() (data, log string)
}
