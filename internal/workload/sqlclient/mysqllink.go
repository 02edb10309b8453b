package sqlclient

import (
	"context"
	"database/sql"
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
// read their result sets through database/sql), its sockets watched as a
// session's are. It is the only connection of a pool of its own, so that
// it is the session's alone and its socket can be shut down under a
// statement waiting on the server.
type MySQLConn struct {
	*sql.Conn
	db      *sql.DB
	sockets *sessionSockets
}

// ConnectMySQL opens a go-sql-driver/mysql connection to dsn for the
// session d was given for: its sockets of the kind d chose (ForUser,
// ForBackground), shut down when ctx ends.
func (d *Dialect) ConnectMySQL(ctx context.Context, dsn string) (*MySQLConn, error) {
	cfg, sockets, err := mysqlConfig(ctx, dsn, d.poller())
	if err != nil {
		return nil, err
	}
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		sockets.release()
		return nil, err
	}
	db := sql.OpenDB(connector)
	// One connection, kept: a broken one is not replaced behind the
	// session's back (the session reconnects or gives up by its own rule).
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		sockets.release()
		return nil, err
	}
	return &MySQLConn{Conn: conn, db: db, sockets: sockets}, nil
}

// Close closes the connection and stops watching its sockets.
func (c *MySQLConn) Close() error {
	defer c.sockets.release()
	return errors.Join(c.Conn.Close(), c.db.Close())
}
