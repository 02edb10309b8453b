package sqlclient

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"
)

// driverLink is a connection of a database/sql pool, used through its
// driver (sql.Conn.Raw, for the length of a transaction or a statement).
// Through database/sql every statement costs a Stmt lookup, a Rows, its
// dependency bookkeeping and converted arguments, about ten allocations and
// as many locks; straight to the driver, with the argument and row buffers
// reused, it costs what the driver itself does.
type driverLink struct {
	// conn is the pool's connection, nil where the link owns its driver
	// connection (own) outside any pool.
	conn *sql.Conn
	own  driver.Conn
	// sockets are own's.
	sockets *sessionSockets
	// dc is the driver's connection while the link is held, and always
	// when the link owns it.
	dc driverConn
	// stmts are the driver's prepared statements, closed with the link.
	stmts           []*driverStmt
	tooManyPrepared func(error) bool
	// skipRows is set where the driver's Exec reads a statement's rows off
	// the wire without converting them (go-sql-driver/mysql); elsewhere
	// Exec may not run a query to its end (mattn/go-sqlite3 steps once).
	skipRows bool
	// args and vals are reused for each statement's arguments and rows.
	args []driver.NamedValue
	vals []driver.Value
}

// driverConn is what the link needs of a driver's connection; the drivers
// dbio uses (go-sql-driver/mysql, mattn/go-sqlite3) have it all.
type driverConn interface {
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
}

// driverStmt is a prepared statement and the number of columns it returns,
// learnt on its first run (asking the driver allocates every time).
type driverStmt struct {
	stmt driver.Stmt
	cols int
}

func (l *driverLink) hold(fn func() error) error {
	if l.dc != nil {
		return fn()
	}
	return l.conn.Raw(func(dc any) error {
		c, ok := dc.(driverConn)
		if !ok {
			return fmt.Errorf("driver connection %T cannot prepare, query and execute with a context", dc)
		}
		l.dc = c
		defer func() { l.dc = nil }()
		return fn()
	})
}

func (l *driverLink) prepare(ctx context.Context, text string) (h any, err error) {
	if l.dc == nil {
		err = l.hold(func() error { h, err = l.prepare(ctx, text); return err })
		return h, err
	}
	st, err := l.dc.PrepareContext(ctx, text)
	if err != nil {
		if l.tooManyPrepared == nil || !l.tooManyPrepared(err) {
			return nil, err
		}
		return nil, nil // the engine's limit: sent as text
	}
	ds := &driverStmt{stmt: st}
	l.stmts = append(l.stmts, ds)
	return ds, nil
}

// bind turns args into the driver's values, in the reused buffer.
func (l *driverLink) bind(args []any) ([]driver.NamedValue, error) {
	var err error
	l.args, err = DriverArgs(l.args[:0], args)
	return l.args, err
}

// DriverArgs appends args to buf as a driver's arguments, converting what
// database/sql would (int to int64) for the types dbio's workloads send; a
// caller reuses buf from one statement to the next.
func DriverArgs(buf []driver.NamedValue, args []any) ([]driver.NamedValue, error) {
	for i, a := range args {
		var v driver.Value
		switch a := a.(type) {
		case int:
			v = int64(a)
		case int32:
			v = int64(a)
		case int64, float64, string, bool, []byte, time.Time, nil:
			v = a
		default:
			return buf, fmt.Errorf("argument %d: unsupported type %T", i+1, a)
		}
		buf = append(buf, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return buf, nil
}

func (l *driverLink) read(ctx context.Context, st *statement, args []any) (n int, err error) {
	if l.dc == nil {
		err = l.hold(func() error { n, err = l.read(ctx, st, args); return err })
		return n, err
	}
	named, err := l.bind(args)
	if err != nil {
		return 0, err
	}
	var rows driver.Rows
	ds, _ := st.prepared.(*driverStmt)
	if ds != nil {
		rows, err = ds.stmt.(driver.StmtQueryContext).QueryContext(ctx, named)
	} else {
		rows, err = l.dc.QueryContext(ctx, st.text, named)
	}
	if err != nil {
		return 0, err
	}
	cols := 0
	if ds != nil {
		cols = ds.cols
	}
	if cols == 0 {
		cols = len(rows.Columns())
		if ds != nil {
			ds.cols = cols
		}
	}
	if cap(l.vals) < cols {
		l.vals = make([]driver.Value, cols)
	}
	// Next receives each row from the driver; nothing needs converting.
	vals := l.vals[:cols]
	for {
		if err := rows.Next(vals); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			rows.Close()
			return n, err
		}
		n++
	}
	return n, rows.Close()
}

func (l *driverLink) receive(ctx context.Context, st *statement, args []any) (err error) {
	if !l.skipRows {
		_, err = l.read(ctx, st, args)
		return err
	}
	_, err = l.write(ctx, st, args)
	return err
}

func (l *driverLink) write(ctx context.Context, st *statement, args []any) (n int64, err error) {
	if l.dc == nil {
		err = l.hold(func() error { n, err = l.write(ctx, st, args); return err })
		return n, err
	}
	named, err := l.bind(args)
	if err != nil {
		return 0, err
	}
	var res driver.Result
	if ds, ok := st.prepared.(*driverStmt); ok {
		res, err = ds.stmt.(driver.StmtExecContext).ExecContext(ctx, named)
	} else {
		res, err = l.dc.ExecContext(ctx, st.text, named)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (l *driverLink) exec(ctx context.Context, text string) (err error) {
	if l.dc == nil {
		return l.hold(func() error { return l.exec(ctx, text) })
	}
	_, err = l.dc.ExecContext(ctx, text, nil)
	return err
}

func (l *driverLink) close() error {
	if l.own != nil {
		// The server drops the connection's statements with it.
		defer l.sockets.release()
		return l.own.Close()
	}
	// The driver's statements belong to the connection, which goes back
	// to the pool: close them on it.
	l.hold(func() error {
		for _, ds := range l.stmts {
			ds.stmt.Close()
		}
		return nil
	})
	return l.conn.Close()
}

func (l *driverLink) shutdown() {
	if l.sockets != nil {
		l.sockets.shutdown()
	}
}
