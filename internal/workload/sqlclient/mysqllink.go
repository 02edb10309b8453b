package sqlclient

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// connectMySQL returns a function opening a session's own go-sql-driver/mysql
// connection to dsn (in that driver's format), used through the driver as
// a driverLink is, whose sockets the session's context shuts down; they
// read and write with blocking system calls unless poller is set. Outside
// database/sql's pool the connection is the session's alone, so that its
// socket can be shut down under a statement waiting on the server.
func connectMySQL(dsn string, tooManyPrepared func(error) bool) func(ctx context.Context, poller bool) (link, error) {
	return func(ctx context.Context, poller bool) (link, error) {
		cfg, sockets, err := mysqlConfig(ctx, dsn, poller)
		if err != nil {
			return nil, err
		}
		l, err := openDriverLink(ctx, cfg)
		if err != nil {
			sockets.release()
			return nil, err
		}
		l.sockets, l.tooManyPrepared, l.skipRows = sockets, tooManyPrepared, true
		return l, nil
	}
}

// mysqlConfig is dsn's go-sql-driver/mysql configuration for a session's
// own connection: dialled through sockets ctx shuts down (blocking system
// calls unless poller is set), the driver's log quiet. A broken connection
// comes back as an error; the driver's own log would write it to dbio's
// terminal a second time.
func mysqlConfig(ctx context.Context, dsn string, poller bool) (*mysqldrv.Config, *sessionSockets, error) {
	cfg, err := mysqldrv.ParseDSN(dsn)
	if err != nil {
		return nil, nil, err
	}
	cfg.Logger = quietLogger{}
	sockets := watchSockets(ctx, poller)
	cfg.DialFunc = sockets.dial
	return cfg, sockets, nil
}

func openDriverLink(ctx context.Context, cfg *mysqldrv.Config) (*driverLink, error) {
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	conn, err := connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	dc, ok := conn.(driverConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("driver connection %T cannot prepare, query and execute with a context", conn)
	}
	return &driverLink{own: conn, dc: dc}, nil
}

// quietLogger discards go-sql-driver/mysql's log.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

// MySQLConn is a go-sql-driver/mysql connection a workload opens itself
// rather than through Connect (TPC-C's, which call stored procedures and
// read their result sets), used through the driver, outside database/sql,
// its sockets watched as a session's are, so that they can be shut down
// under a statement waiting on the server.
//
// Query leaves what follows the rows a caller reads on the socket until
// the next statement: the final status of a CALL, which MariaDB sends in a
// packet of its own after the procedure's last result set. Read at once,
// that status costs a second wait for the socket, a sleep and a wakeup of
// the session's thread, in nearly every transaction; read at the next
// statement, it has long arrived. The transaction's time, taken when the
// caller has its rows, ends when the terminal would show its output. An
// error the server reports after those rows surfaces at the next statement
// instead: TPC-C's procedures send their last rows after their COMMIT, so
// that only a broken connection does.
type MySQLConn struct {
	conn    driver.Conn
	queryer driver.QueryerContext
	execer  driver.ExecerContext
	sockets *sessionSockets
	args    []driver.NamedValue
	// rest is the last answer, its rows read as far as the caller wanted.
	rest driver.Rows
}

// ConnectMySQL opens a go-sql-driver/mysql connection to dsn for the
// session d was given for: its sockets of the kind d chose (ForUser,
// ForBackground), shut down when ctx ends, and its arguments interpolated
// into each statement's text (one round trip, no prepared statement).
func (d *Dialect) ConnectMySQL(ctx context.Context, dsn string) (*MySQLConn, error) {
	cfg, sockets, err := mysqlConfig(ctx, dsn, d.poller())
	if err != nil {
		return nil, err
	}
	cfg.InterpolateParams = true
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		sockets.release()
		return nil, err
	}
	conn, err := connector.Connect(ctx)
	if err != nil {
		sockets.release()
		return nil, err
	}
	q, okQ := conn.(driver.QueryerContext)
	e, okE := conn.(driver.ExecerContext)
	if !okQ || !okE {
		conn.Close()
		sockets.release()
		return nil, fmt.Errorf("driver connection %T cannot query and execute with a context", conn)
	}
	return &MySQLConn{conn: conn, queryer: q, execer: e, sockets: sockets}, nil
}

// finish reads the rest of the last answer off the socket.
func (c *MySQLConn) finish() error {
	if c.rest == nil {
		return nil
	}
	err := c.rest.Close()
	c.rest = nil
	if err != nil {
		return fmt.Errorf("the end of the last statement's answer: %w", err)
	}
	return nil
}

// Query sends query with args and returns its answer: the caller reads its
// rows with Next (and NextResultSet) into values it sizes to the result's
// columns, and never closes it; the rest is read at the next statement.
// Values are the driver's: []byte for text (valid until the next Next),
// int64, float64, time.Time or nil.
func (c *MySQLConn) Query(ctx context.Context, query string, args ...any) (driver.Rows, error) {
	if err := c.finish(); err != nil {
		return nil, err
	}
	named, err := DriverArgs(c.args[:0], args)
	c.args = named
	if err != nil {
		return nil, err
	}
	rows, err := c.queryer.QueryContext(ctx, query, named)
	if err != nil {
		return nil, err
	}
	c.rest = rows
	return rows, nil
}

// Drop reads the rest of the last answer now, after the caller failed to
// read it: the connection is then ready for the next statement, or that
// statement finds it broken.
func (c *MySQLConn) Drop() { _ = c.finish() }

// Exec runs a statement that returns no rows.
func (c *MySQLConn) Exec(ctx context.Context, query string, args ...any) error {
	if err := c.finish(); err != nil {
		return err
	}
	named, err := DriverArgs(c.args[:0], args)
	c.args = named
	if err != nil {
		return err
	}
	_, err = c.execer.ExecContext(ctx, query, named)
	return err
}

// Close reads the rest of the last answer, closes the connection and stops
// watching its sockets.
func (c *MySQLConn) Close() error {
	defer c.sockets.release()
	return errors.Join(c.finish(), c.conn.Close())
}
