// Package txerr sorts the errors an engine returns to a workload's
// transaction into what the workload should do next: count a failure, run
// the transaction again, reconnect, or give up on the database. The
// classifiers know each engine's error codes; workloads find them by the
// engine name an instance reports (engine.Info.Engine).
package txerr

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
)

// Class is what an error means for the transaction and the session.
type Class int

const (
	// Failed: count the transaction as failed and go on.
	Failed Class = iota
	// Retry: roll back and run the transaction again: a deadlock, a
	// serialization failure, a lock wait timeout, a busy database, or a
	// duplicate key from a concurrent delete and re-insert of one row. These
	// are the errors sysbench 1.0 ignores and restarts on.
	Retry
	// Lost: the connection is gone; open a new one and go on.
	Lost
	// Fatal: the database cannot go on (disk full, I/O error, corruption).
	Fatal
)

// Classifier sorts one engine's errors.
type Classifier func(error) Class

var classifiers = map[string]Classifier{}

func register(engineName string, c Classifier) {
	if _, dup := classifiers[engineName]; dup {
		panic("txerr: classifier registered twice for " + engineName)
	}
	classifiers[engineName] = c
}

// For returns the classifier of the named engine; an engine without one gets
// a classifier that knows only broken connections.
func For(engineName string) Classifier {
	if c, ok := classifiers[engineName]; ok {
		return c
	}
	return func(err error) Class {
		if LostConnection(err) {
			return Lost
		}
		return Failed
	}
}

// LostConnection recognizes a connection that broke under the driver.
func LostConnection(err error) bool {
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &ne) || errors.Is(err, sql.ErrConnDone)
}
