// Package txerr sorts the errors an engine returns to a workload's
// transaction into what the workload should do next: count a failure, run
// the transaction again, reconnect, or give up on the database. Each engine's
// instance knows its own error codes and classifies them (ErrorClassifier);
// txerr names the classes and knows what every driver shares, a broken
// connection.
package txerr

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"dbio/internal/engine"
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

// ErrorClassifier is implemented by an engine's instance, which knows the
// error codes of its engine and driver.
type ErrorClassifier interface {
	ClassifyError(err error) Class
}

// For returns how inst's errors are sorted: by the instance when it knows
// its engine's codes, else by broken connections alone.
func For(inst engine.Instance) Classifier {
	if c, ok := inst.(ErrorClassifier); ok {
		return c.ClassifyError
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

// FullDetector is implemented by an instance that tells, from its engine's
// own codes, an error caused by a full filesystem: an engine's message need
// not say "No space left on device" (PostgreSQL's partial write of a block
// says "wrote only 4096 of 8192 bytes"), but its code does.
type FullDetector interface {
	DiskFull(err error) bool
}

// DiskFull reports whether err, from inst's engine or from dbio's own
// writes, comes from a full filesystem.
func DiskFull(inst engine.Instance, err error) bool {
	if err == nil {
		return false
	}
	if d, ok := inst.(FullDetector); ok && d.DiskFull(err) {
		return true
	}
	// A message is the last resort, for errors that crossed a process (a
	// backup tool's output, a server's log line) and kept only their words.
	return errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "No space left on device")
}
