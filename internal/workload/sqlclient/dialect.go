// Package sqlclient is what dbio's client-side SQL workloads (sysbench,
// AS3AP) share: the dialect of each engine (placeholders, how transactions
// begin, row locks, table options, statistics), bulk loading of their tables
// with multi-row INSERTs, and the session plumbing of a virtual user (one
// connection, statements prepared once, a transaction run again after a
// deadlock or reconnected after a lost connection).
//
// What differs between workloads on one engine (their column types, their
// notes for the results) stays with the workload, chosen with ByEngine.
package sqlclient

import (
	"context"
	"runtime"
	"strconv"
	"sync"

	"dbio/internal/engine"
	"dbio/internal/engine/txerr"
	"dbio/internal/workload"
)

// family is a group of engines that speak the same SQL.
type family int

const (
	familySQLite family = iota
	familyPostgres
	familyMySQL
)

// Dialect is how a client-side workload's statements reach one engine.
type Dialect struct {
	family family
	// Placeholder writes the n-th (1-based) parameter; nil means "?".
	Placeholder func(n int) string
	// BeginRead and BeginWrite start a transaction that only reads, or that
	// writes (SQLite takes its write lock at once with BEGIN IMMEDIATE).
	BeginRead, BeginWrite string
	// ForUpdate locks the rows a transaction reads before it updates them;
	// empty where the write transaction already excludes other writers (SQLite).
	ForUpdate string
	// TableSuffix follows CREATE TABLE's closing parenthesis.
	TableSuffix string
	// LoadWorkers is how many tables load at once by default.
	LoadWorkers int
	// Classify says what an error means for the session.
	Classify txerr.Classifier
	// TooManyPrepared reports the engine refusing another prepared
	// statement; the session then sends that statement unprepared. Nil
	// where the engine has no such limit.
	TooManyPrepared func(error) bool

	// analyze refreshes a table's optimizer statistics.
	analyze func(table string) string
	// writeLock queues writers inside dbio where the engine admits one
	// writer at a time (SQLite); nil elsewhere.
	writeLock *sync.Mutex
	// Sockets overrides the engine's choice of sockets for every session
	// of the workload (see ForUser); the zero value keeps it.
	Sockets Sockets
	// user is the session the dialect was given for (ForUser), background
	// one of a background job (ForBackground).
	user       int
	background bool

	// native opens a session's own connection with the engine's native
	// driver, where it costs the client less than database/sql; nil takes
	// connections from the instance's pool.
	native func(ctx context.Context, poller bool) (link, error)
}

// For returns the dialect of inst's engine for the named workload (named in
// the error for an engine it does not support). Writers owns the write
// queues of SQLite databases: sessions that must queue together share one.
func For(workloadName string, inst engine.Instance, writers *Writers) (*Dialect, error) {
	families := workload.NewPerEngine[family](workloadName)
	families.Register("sqlite", familySQLite)
	families.Register("postgres", familyPostgres)
	families.Register("mariadb", familyMySQL)
	families.Register("mysql", familyMySQL)
	f, err := families.For(inst)
	if err != nil {
		return nil, err
	}
	switch f {
	case familySQLite:
		return &Dialect{
			family:      f,
			BeginRead:   "BEGIN",
			BeginWrite:  "BEGIN IMMEDIATE",
			analyze:     func(t string) string { return "ANALYZE " + t },
			writeLock:   writers.For(inst.DSN()),
			LoadWorkers: 1, // one writer: parallel loaders would only queue
			Classify:    txerr.For(inst),
		}, nil
	case familyPostgres:
		return &Dialect{
			family:      f,
			Placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
			BeginRead:   "BEGIN",
			BeginWrite:  "BEGIN",
			ForUpdate:   " FOR UPDATE",
			analyze:     func(t string) string { return "ANALYZE " + t },
			LoadWorkers: 4,
			Classify:    txerr.For(inst),
			native:      connectPgx(inst.DSN()),
		}, nil
	default:
		return &Dialect{
			family:          f,
			BeginRead:       "BEGIN",
			BeginWrite:      "BEGIN",
			ForUpdate:       " FOR UPDATE",
			TableSuffix:     " ENGINE = InnoDB",
			analyze:         func(t string) string { return "ANALYZE TABLE " + t },
			LoadWorkers:     4,
			Classify:        txerr.For(inst),
			TooManyPrepared: preparedLimitOf(inst),
			native:          connectMySQL(inst.DSN(), preparedLimitOf(inst)),
		}, nil
	}
}

// preparedLimit is an instance whose server can refuse another prepared
// statement (MariaDB's max_prepared_stmt_count): the engine knows its code.
type preparedLimit interface{ TooManyPrepared(error) bool }

func preparedLimitOf(inst engine.Instance) func(error) bool {
	if p, ok := inst.(preparedLimit); ok {
		return p.TooManyPrepared
	}
	return nil
}

// Sockets is how a workload's sessions wait for the server: in blocking
// system calls on their own thread (see blockingConn), or through Go's
// network poller, as connections of a database/sql pool do.
type Sockets int

const (
	// SocketsByEngine is the engine's choice, made per session by ForUser.
	SocketsByEngine Sockets = iota
	// SocketsPoller puts every session in the poller.
	SocketsPoller
	// SocketsBlocking gives every session a blocking socket, to measure
	// one kind against the other.
	SocketsBlocking
)

// ForUser returns the dialect of user's session (counted from 0), whose
// kind of socket it decides. Unless Sockets overrides it, the first
// GOMAXPROCS-1 users wait in blocking system calls and the others go
// through the network poller. A goroutine in a blocking call keeps its P;
// while one P is left for everything else the runtime leaves it there, but
// with as many blocking sessions as Ps it takes Ps away and hands them back
// on nearly every call. So vusers raises GOMAXPROCS before a step's
// sessions open, to give each of them a P (for up to
// vusers.SessionsPerCPU a CPU): measured with oltp_read_write on 2 cores,
// a blocking socket costs less client CPU than the poller at one user and
// at four alike, once each has its P (docs/performance.md).
func (d *Dialect) ForUser(user int) *Dialect {
	c := *d
	c.user, c.background = user, false
	return &c
}

// ForBackground returns the dialect of a background job's session, which
// shares the process with the users: by the engine's choice it goes
// through the poller, leaving the blocking sockets to the users.
func (d *Dialect) ForBackground() *Dialect {
	c := *d
	c.background = true
	return &c
}

// poller says whether the session the dialect was given for reads and
// writes through the network poller: the one place its socket is chosen.
func (d *Dialect) poller() bool {
	switch d.Sockets {
	case SocketsPoller:
		return true
	case SocketsBlocking:
		return false
	}
	return d.background || d.user >= runtime.GOMAXPROCS(0)-1
}

// Bind writes a statement with the dialect's placeholders for its "?" marks.
func (d *Dialect) Bind(query string) string { return workload.Rebind(query, d.Placeholder) }

// CreateTable is the DDL of a table whose column definitions are body.
func (d *Dialect) CreateTable(table, body string) string {
	return "CREATE TABLE " + table + " (" + body + ")" + d.TableSuffix
}

// LockWrites queues the caller behind the other writers of a database that
// admits one writer at a time, and returns the unlock; elsewhere both are no-ops.
func (d *Dialect) LockWrites() (unlock func()) {
	if d.writeLock == nil {
		return func() {}
	}
	d.writeLock.Lock()
	return d.writeLock.Unlock
}

// ByEngine holds a workload's own choice for each engine family, for what
// differs between engines beyond the dialect (column types, notes).
type ByEngine[T any] struct {
	SQLite, Postgres, MySQL T
}

// For returns the choice for d's engine.
func (b ByEngine[T]) For(d *Dialect) T {
	switch d.family {
	case familySQLite:
		return b.SQLite
	case familyPostgres:
		return b.Postgres
	default:
		return b.MySQL
	}
}

// Writers queues the writers of each SQLite database: SQLite admits one
// writer at a time, and a queue in dbio hands the lock over at once where
// SQLite's busy handler would sleep and retry. The zero value is ready to use.
type Writers struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex // by DSN
}

// For returns the queue of the database at dsn.
func (w *Writers) For(dsn string) *sync.Mutex {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.locks == nil {
		w.locks = map[string]*sync.Mutex{}
	}
	l, ok := w.locks[dsn]
	if !ok {
		l = &sync.Mutex{}
		w.locks[dsn] = l
	}
	return l
}
