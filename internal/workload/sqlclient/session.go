package sqlclient

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/workload"
	"dbio/internal/workload/txerr"
)

// MaxRetries bounds how often one transaction runs again after a deadlock,
// serialization failure, busy database or another error the engine's
// classifier calls worth retrying.
const MaxRetries = 100

// Conn is a virtual user's own connection, with the statements it prepared
// and the recorder its transactions are counted in.
type Conn struct {
	d    *Dialect
	db   *sql.DB
	rec  *metrics.Recorder
	conn *sql.Conn
	// stmts are the prepared statements by their bound text; a nil entry is
	// a statement the engine would not prepare, sent as text.
	stmts map[string]*sql.Stmt
}

// Connect takes a connection of db's pool for one session, whose
// transactions rec counts.
func Connect(ctx context.Context, db *sql.DB, d *Dialect, rec *metrics.Recorder) (*Conn, error) {
	c := &Conn{d: d, db: db, rec: rec}
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Conn) connect(ctx context.Context) error {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return err
	}
	c.conn, c.stmts = conn, map[string]*sql.Stmt{}
	return nil
}

// Dialect is the dialect the connection's statements are written in.
func (c *Conn) Dialect() *Dialect { return c.d }

// Close closes the prepared statements and gives the connection back.
func (c *Conn) Close() error {
	for _, st := range c.stmts {
		if st != nil {
			st.Close()
		}
	}
	return c.conn.Close()
}

// Run runs transaction tx (recorded as index tx, named name in errors) until
// it commits, as a benchmark client does: again after an error the engine
// calls worth retrying, at most MaxRetries times; on a new connection after
// a lost one, counted as failed. Latency runs from the first attempt to the
// end of the last. Only an error the database cannot go on after is
// returned, wrapping workload.ErrSessionLost; a cancelled ctx ends the
// transaction uncounted.
func (c *Conn) Run(ctx context.Context, tx int, name string, attempt func() error) error {
	start := time.Now()
	retries := 0
	for {
		err := attempt()
		if err == nil {
			c.rec.RecordRetried(tx, time.Since(start), metrics.Committed, retries)
			return nil
		}
		if ctx.Err() != nil {
			return nil // cancelled mid-transaction: neither counted nor an error
		}
		switch c.d.Classify(err) {
		case txerr.Retry:
			if retries < MaxRetries {
				retries++
				continue
			}
		case txerr.Fatal:
			return fmt.Errorf("%w: %s: %v", workload.ErrSessionLost, name, err)
		case txerr.Lost:
			c.rec.RecordRetried(tx, 0, metrics.Failed, retries)
			c.Close()
			if cerr := c.connect(ctx); cerr != nil {
				return fmt.Errorf("%w: %s: %v; reconnecting: %v", workload.ErrSessionLost, name, err, cerr)
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
func (c *Conn) Tx(ctx context.Context, begin string, body func() error) (err error) {
	if _, err := c.conn.ExecContext(ctx, begin); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// The connection may be gone; the error that matters is err.
			c.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err := body(); err != nil {
		return err
	}
	_, err = c.conn.ExecContext(ctx, "COMMIT")
	return err
}

// stmt returns the prepared statement for query (written with "?" marks),
// preparing it on first use, and its bound text; a nil statement means
// send the text unprepared.
func (c *Conn) stmt(ctx context.Context, query string) (*sql.Stmt, string, error) {
	text := c.d.Bind(query)
	if st, ok := c.stmts[text]; ok {
		return st, text, nil
	}
	st, err := c.conn.PrepareContext(ctx, text)
	if err != nil {
		if c.d.TooManyPrepared == nil || !c.d.TooManyPrepared(err) {
			return nil, text, err
		}
		st = nil
	}
	c.stmts[text] = st
	return st, text, nil
}

// Query runs a statement that returns rows, prepared once per connection.
func (c *Conn) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return send(c, ctx, query,
		func(st *sql.Stmt) (*sql.Rows, error) { return st.QueryContext(ctx, args...) },
		func(text string) (*sql.Rows, error) { return c.conn.QueryContext(ctx, text, args...) })
}

// Exec runs a statement that returns no rows, prepared once per connection.
func (c *Conn) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return send(c, ctx, query,
		func(st *sql.Stmt) (sql.Result, error) { return st.ExecContext(ctx, args...) },
		func(text string) (sql.Result, error) { return c.conn.ExecContext(ctx, text, args...) })
}

// send runs query through its prepared statement, or as text where the
// engine would not prepare it.
func send[T any](c *Conn, ctx context.Context, query string, prepared func(*sql.Stmt) (T, error), unprepared func(string) (T, error)) (T, error) {
	st, text, err := c.stmt(ctx, query)
	switch {
	case err != nil:
		var none T
		return none, err
	case st == nil:
		return unprepared(text)
	}
	return prepared(st)
}

// Drain reads every row of a result of cols columns, as a client does, and
// counts them.
func Drain(rows *sql.Rows, cols int) (int, error) {
	dest := make([]any, cols)
	raw := make([]sql.RawBytes, cols)
	for i := range dest {
		dest[i] = &raw[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return n, err
		}
		n++
	}
	return n, errors.Join(rows.Err(), rows.Close())
}
