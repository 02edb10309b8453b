package sqlclient

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// pgxLink is a native pgx connection. Through database/sql, pgx turns every
// text value of every row into a Go string and every query into a dozen
// allocations; natively a row's values stay in the connection's buffer and
// a query costs a handful. Statements are prepared by pgx on first use and
// reused (its statement cache, keyed by the text), one round trip each.
type pgxLink struct {
	conn    *pgx.Conn
	sockets *sessionSockets
}

// connectPgx returns a function opening native connections to dsn, whose
// sockets the session's context shuts down; they read and write with
// blocking system calls unless poller is set.
func connectPgx(dsn string) func(ctx context.Context, poller bool) (link, error) {
	return func(ctx context.Context, poller bool) (link, error) {
		c, err := openPgx(ctx, dsn, poller)
		if err != nil {
			return nil, err
		}
		return &pgxLink{conn: c.Conn, sockets: c.sockets}, nil
	}
}

// PgxConn is a native pgx connection a workload opens itself rather than
// through Connect (TPC-C's, which call server-side functions), its sockets
// watched as a session's are.
type PgxConn struct {
	*pgx.Conn
	sockets *sessionSockets
}

// ConnectPgx opens a native pgx connection to dsn for the session d was
// given for: its sockets of the kind d chose (ForUser, ForBackground),
// shut down when ctx ends.
func (d *Dialect) ConnectPgx(ctx context.Context, dsn string) (*PgxConn, error) {
	return openPgx(ctx, dsn, d.poller())
}

// Close closes the connection and stops watching its sockets.
func (c *PgxConn) Close() error {
	defer c.sockets.release()
	return c.Conn.Close(context.Background())
}

// openPgx opens a native connection to dsn whose sockets ctx shuts down;
// they read and write with blocking system calls unless poller is set.
func openPgx(ctx context.Context, dsn string, poller bool) (*PgxConn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	sockets := watchSockets(ctx, poller)
	cfg.DialFunc = sockets.dial
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		sockets.release()
		return nil, err
	}
	return &PgxConn{Conn: conn, sockets: sockets}, nil
}

// prepare leaves the preparing to pgx's statement cache, which does it on
// the statement's first run.
func (l *pgxLink) prepare(context.Context, string) (any, error) { return nil, nil }

func (l *pgxLink) read(ctx context.Context, st *statement, args []any) (int, error) {
	rows, err := l.conn.Query(ctx, st.text, args...)
	if err != nil {
		return 0, err
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	return n, rows.Err()
}

// receive reads the rows as read does: pgx leaves a row's values in its
// buffer until they are asked for, and its Exec would copy every row.
func (l *pgxLink) receive(ctx context.Context, st *statement, args []any) error {
	_, err := l.read(ctx, st, args)
	return err
}

func (l *pgxLink) write(ctx context.Context, st *statement, args []any) (int64, error) {
	tag, err := l.conn.Exec(ctx, st.text, args...)
	return tag.RowsAffected(), err
}

func (l *pgxLink) exec(ctx context.Context, text string) error {
	_, err := l.conn.Exec(ctx, text)
	return err
}

func (l *pgxLink) close() error {
	defer l.sockets.release()
	return l.conn.Close(context.Background())
}

func (l *pgxLink) shutdown() { l.sockets.shutdown() }

// hold runs fn: the native connection is the session's alone already.
func (l *pgxLink) hold(fn func() error) error { return fn() }
