package sqlclient

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgxLink is a native pgx connection. Through database/sql, pgx turns every
// text value of every row into a Go string and every query into a dozen
// allocations; natively a row's values stay in the connection's buffer and
// a query costs a handful.
//
// Statements are prepared once per connection and run through pgconn, the
// protocol layer beneath pgx's query builder, as libpq runs sysbench's:
// arguments sent as text, rows counted where they lie, in text. pgx's own
// Query and Exec look the statement up in a cache by its text, pick an
// encoding plan for every argument and build a rows value: measured in the
// sysbench cross-check, a third of the client's user CPU on PostgreSQL.
// An argument of a kind paramText does not write goes through pgx instead.
type pgxLink struct {
	conn    *pgx.Conn
	sockets *sessionSockets
	// prepared counts the statements prepared, which names them.
	prepared int
	// text and params are paramText's buffers, reused statement after
	// statement.
	text   []byte
	ends   []int
	params [][]byte
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

// prepare prepares text on the connection, under a name of the link's.
func (l *pgxLink) prepare(ctx context.Context, text string) (any, error) {
	l.prepared++
	name := "dbio_" + strconv.Itoa(l.prepared)
	if _, err := l.conn.PgConn().Prepare(ctx, name, text, nil); err != nil {
		return nil, err
	}
	return name, nil
}

// paramText writes args as the text PostgreSQL parses each parameter
// from; false if one is of a kind it does not write. The values share
// the link's buffer until the next call.
func (l *pgxLink) paramText(args []any) ([][]byte, bool) {
	l.text, l.ends, l.params = l.text[:0], l.ends[:0], l.params[:0]
	for _, a := range args {
		switch v := a.(type) {
		case int:
			l.text = strconv.AppendInt(l.text, int64(v), 10)
		case int32:
			l.text = strconv.AppendInt(l.text, int64(v), 10)
		case int64:
			l.text = strconv.AppendInt(l.text, v, 10)
		case string:
			l.text = append(l.text, v...)
		case float64:
			l.text = strconv.AppendFloat(l.text, v, 'g', -1, 64)
		default:
			return nil, false
		}
		l.ends = append(l.ends, len(l.text))
	}
	// Sliced once every value is written: appending may move the buffer.
	start := 0
	for _, end := range l.ends {
		l.params = append(l.params, l.text[start:end:end])
		start = end
	}
	return l.params, true
}

// run runs st with args through pgconn and counts its rows; ok is false
// when an argument needs pgx's encoding.
func (l *pgxLink) run(ctx context.Context, st *statement, args []any) (rows int, tag pgconn.CommandTag, ok bool, err error) {
	name, prepared := st.prepared.(string)
	if !prepared {
		return 0, tag, false, nil
	}
	params, text := l.paramText(args)
	if !text {
		return 0, tag, false, nil
	}
	rr := l.conn.PgConn().ExecPrepared(ctx, name, params, nil, nil)
	for rr.NextRow() {
		rows++
	}
	tag, err = rr.Close()
	return rows, tag, true, err
}

func (l *pgxLink) read(ctx context.Context, st *statement, args []any) (int, error) {
	if n, _, ok, err := l.run(ctx, st, args); ok {
		return n, err
	}
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

// receive reads the rows as read does: they stay in the connection's
// buffer until they are asked for, and are not.
func (l *pgxLink) receive(ctx context.Context, st *statement, args []any) error {
	_, err := l.read(ctx, st, args)
	return err
}

func (l *pgxLink) write(ctx context.Context, st *statement, args []any) (int64, error) {
	if _, tag, ok, err := l.run(ctx, st, args); ok {
		return tag.RowsAffected(), err
	}
	tag, err := l.conn.Exec(ctx, st.text, args...)
	return tag.RowsAffected(), err
}

// exec sends text in the simple protocol, as pgx's Exec does without
// arguments, without its cache lookups.
func (l *pgxLink) exec(ctx context.Context, text string) error {
	return l.conn.PgConn().Exec(ctx, text).Close()
}

func (l *pgxLink) close() error {
	defer l.sockets.release()
	return l.conn.Close(context.Background())
}

func (l *pgxLink) shutdown() { l.sockets.shutdown() }

// hold runs fn: the native connection is the session's alone already.
func (l *pgxLink) hold(fn func() error) error { return fn() }
