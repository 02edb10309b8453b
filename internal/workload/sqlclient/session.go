package sqlclient

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"dbio/internal/engine/txerr"
	"dbio/internal/metrics"
	"dbio/internal/vusers"
	"dbio/internal/workload"
)

// MaxRetries bounds how often one transaction runs again after a deadlock,
// serialization failure, busy database or another error the engine's
// classifier calls worth retrying.
const MaxRetries = 100

// Conn is a virtual user's own connection, with the statements it prepared
// and the recorder its transactions are counted in.
type Conn struct {
	d   *Dialect
	db  *sql.DB
	rec *metrics.Recorder
	// link is the connection itself: the session's own where the engine's
	// dialect opens one (PostgreSQL, MariaDB), one of db's otherwise.
	link link
	// stmts are the statements by their text as the workload wrote it
	// ("?" marks); their handles belong to link and go with it.
	stmts map[string]*statement
	// busy is held while a transaction or a statement outside one runs
	// (inTx says which, for the session's goroutine), so that Close from
	// another goroutine (a step's stop after a server stopped answering)
	// ends it, by shutting the link's socket down, before it closes what
	// it uses. closed is set as Close begins; linkMu guards link for it.
	busy   sync.Mutex
	inTx   bool
	closed atomic.Bool
	linkMu sync.Mutex
	// inPoller is the dialect's InPoller, decided once when the session
	// connects: its socket's kind does not change, and asking again would
	// take the runtime's scheduler lock (GOMAXPROCS) every transaction.
	inPoller bool
	yielder  workload.Yielder
}

// statement is one statement of a session: its text bound to the dialect's
// placeholders, and what the link prepared for it.
type statement struct {
	text     string
	prepared any
}

// link is how a session's statements reach the database. Statements run on
// contexts that cannot be cancelled (see Read), so a link never watches one.
type link interface {
	// prepare readies text for repeated use; a nil handle sends it as text.
	prepare(ctx context.Context, text string) (any, error)
	read(ctx context.Context, st *statement, args []any) (int, error)
	// receive runs a statement that returns rows and reads them all off
	// the connection, counting and converting none where the driver can.
	receive(ctx context.Context, st *statement, args []any) error
	write(ctx context.Context, st *statement, args []any) (int64, error)
	// exec sends a statement without arguments (BEGIN, COMMIT, ROLLBACK).
	exec(ctx context.Context, text string) error
	// hold runs fn, whose statements make one transaction, with the
	// connection held for all of them.
	hold(fn func() error) error
	// shutdown ends a statement waiting on the server, from another
	// goroutine, by shutting the socket down; a no-op where the link has
	// no socket of its own.
	shutdown()
	close() error
}

// Connect opens a connection for one session, whose transactions rec
// counts: its own connection where the dialect has one (PostgreSQL through
// pgx, MariaDB through go-sql-driver/mysql, their sockets of the kind the
// dialect chose for the session (Dialect.ForUser) and shut down when ctx
// ends), else one taken from db's pool (SQLite).
func Connect(ctx context.Context, db *sql.DB, d *Dialect, rec *metrics.Recorder) (*Conn, error) {
	c := &Conn{d: d, db: db, rec: rec, inPoller: d.InPoller()}
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Conn) connect(ctx context.Context) error {
	var l link
	if c.d.native != nil {
		pl, err := c.d.native(ctx, c.inPoller)
		if err != nil {
			return err
		}
		l = pl
	} else {
		conn, err := c.db.Conn(ctx)
		if err != nil {
			return err
		}
		l = &driverLink{conn: conn, tooManyPrepared: c.d.TooManyPrepared}
	}
	c.linkMu.Lock()
	defer c.linkMu.Unlock()
	c.link, c.stmts = l, map[string]*statement{}
	return nil
}

// Dialect is the dialect the connection's statements are written in.
func (c *Conn) Dialect() *Dialect { return c.d }

// errClosed is a closed session's refusal to reconnect.
var errClosed = errors.New("the session is closed")

// Close closes the prepared statements and the connection. A transaction
// in progress on another goroutine is ended first, with an error, where
// the connection has a socket of its own (PostgreSQL and MariaDB); on a
// pool's connection it is waited for.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	if !c.busy.TryLock() {
		c.linkMu.Lock()
		l := c.link
		c.linkMu.Unlock()
		l.shutdown()
		c.busy.Lock()
	}
	defer c.busy.Unlock()
	return c.link.close()
}

// enter starts a statement outside a transaction, or a transaction: the
// session's work, which Close waits for. leave ends it.
func (c *Conn) enter() error {
	if c.inTx {
		return nil
	}
	c.busy.Lock()
	if c.closed.Load() {
		c.busy.Unlock()
		return errClosed
	}
	return nil
}

func (c *Conn) leave() {
	if !c.inTx {
		c.busy.Unlock()
	}
}

// reconnect replaces a lost connection, unless the session was closed.
func (c *Conn) reconnect(ctx context.Context) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	c.link.close()
	return c.connect(ctx)
}

// KeepsThread implements vusers.ThreadKeeper: a session on a blocking
// socket, or on SQLite, waits for its server on its own thread, and the
// workloads built on Conn (sysbench's, AS3AP's) make many round trips
// between two yields.
func (c *Conn) KeepsThread() bool { return !c.inPoller }

var _ vusers.ThreadKeeper = (*Conn)(nil)

// Run runs transaction tx (recorded as index tx, named name in errors) until
// it commits, as a benchmark client does: again after an error the engine
// calls worth retrying, at most MaxRetries times; on a new connection after
// a lost one, counted as failed. Latency runs from the first attempt to the
// end of the last. Only an error the database cannot go on after is
// returned, wrapping workload.ErrSessionLost; a cancelled ctx ends the
// transaction uncounted.
func (c *Conn) Run(ctx context.Context, tx int, name string, attempt func() error) error {
	// A session waits for the server inside blocking system calls (see
	// blockingConn), or cgo calls on SQLite, so its goroutine would never
	// pass through the scheduler: it yields now and then (Yielder). A
	// session in the network poller parks at every read, so it passes
	// through the scheduler anyway; a yield would only send it through the
	// global run queue, and wake another thread to take it.
	start := time.Now()
	if !c.inPoller && c.yielder.Yield(start) {
		start = time.Now()
	}
	retries := 0
	for {
		err := attempt()
		if err == nil {
			c.rec.RecordRetried(tx, time.Since(start), metrics.Committed, retries)
			return nil
		}
		if ctx.Err() != nil || c.closed.Load() {
			return nil // cancelled or closed mid-transaction: neither counted nor an error
		}
		switch c.d.Classify(err) {
		case txerr.Retry:
			if retries < MaxRetries {
				retries++
				continue
			}
		case txerr.Fatal:
			return fmt.Errorf("%w: %s: %w", workload.ErrSessionLost, name, err)
		case txerr.Lost:
			c.rec.RecordRetried(tx, 0, metrics.Failed, retries)
			if cerr := c.reconnect(ctx); cerr != nil {
				return fmt.Errorf("%w: %s: %w; reconnecting: %v", workload.ErrSessionLost, name, err, cerr)
			}
			c.rec.RecordReconnect(tx)
			return nil
		}
		c.rec.RecordRetried(tx, 0, metrics.Failed, retries)
		return nil
	}
}

// Tx runs body inside a transaction that begin starts, and commits it; when
// body or the commit fails it rolls back and returns the error.
func (c *Conn) Tx(ctx context.Context, begin string, body func() error) error {
	ctx = context.WithoutCancel(ctx)
	if err := c.enter(); err != nil {
		return err
	}
	c.inTx = true
	defer func() {
		c.inTx = false
		c.leave()
	}()
	return c.link.hold(func() error {
		if err := c.link.exec(ctx, begin); err != nil {
			return err
		}
		err := body()
		if err == nil {
			if err = c.link.exec(ctx, "COMMIT"); err == nil {
				return nil
			}
		}
		// The connection may be gone; the error that matters is err.
		c.link.exec(ctx, "ROLLBACK")
		return err
	})
}

// stmt returns the statement for query (written with "?" marks), preparing
// it on first use.
func (c *Conn) stmt(ctx context.Context, query string) (*statement, error) {
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st := &statement{text: c.d.Bind(query)}
	h, err := c.link.prepare(ctx, st.text)
	if err != nil {
		return nil, err
	}
	st.prepared = h
	c.stmts[query] = st
	return st, nil
}

// Read runs a statement that returns rows, prepared once per connection,
// and reads every row off the connection as a client does (the values are
// received, not converted), returning how many there were.
//
// Statements run on a context that cannot be cancelled: given a
// cancellable one, database/sql and the drivers start or wake a watcher
// goroutine for every query, which costs the load generator more CPU than
// the query's own round trip and, on a busy machine, takes it from the
// database. Callers notice a cancellation between statements instead.
func (c *Conn) Read(ctx context.Context, query string, args ...any) (int, error) {
	st, err := c.enterStmt(ctx, query)
	if err != nil {
		return 0, err
	}
	defer c.leave()
	return c.link.read(context.WithoutCancel(ctx), st, args)
}

// Receive runs a statement that returns rows, prepared once per
// connection, and reads its rows off the connection without handing them
// over: sysbench's C client stores each result (mysql_stmt_store_result)
// and never fetches its values, where Read's driver would convert every
// value of every row for a count the caller does not need.
func (c *Conn) Receive(ctx context.Context, query string, args ...any) error {
	st, err := c.enterStmt(ctx, query)
	if err != nil {
		return err
	}
	defer c.leave()
	return c.link.receive(context.WithoutCancel(ctx), st, args)
}

// Write runs a statement that returns no rows, prepared once per
// connection, and returns the rows it changed.
func (c *Conn) Write(ctx context.Context, query string, args ...any) (int64, error) {
	st, err := c.enterStmt(ctx, query)
	if err != nil {
		return 0, err
	}
	defer c.leave()
	return c.link.write(context.WithoutCancel(ctx), st, args)
}

// enterStmt enters the session for one statement (enter) and gives query
// prepared on this connection; the caller leaves once it ran. On an error
// the session is left already.
func (c *Conn) enterStmt(ctx context.Context, query string) (*statement, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	st, err := c.stmt(ctx, query)
	if err != nil {
		c.leave()
		return nil, err
	}
	return st, nil
}
