package sqlclient

import (
	"context"
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
		cfg, err := mysqldrv.ParseDSN(dsn)
		if err != nil {
			return nil, err
		}
		// A broken connection comes back as an error; the driver's own log
		// would write it to dbio's terminal a second time.
		cfg.Logger = quietLogger{}
		sockets := watchSockets(ctx, poller)
		cfg.DialFunc = sockets.dial
		l, err := openDriverLink(ctx, cfg)
		if err != nil {
			sockets.release()
			return nil, err
		}
		l.sockets, l.tooManyPrepared = sockets, tooManyPrepared
		return l, nil
	}
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
