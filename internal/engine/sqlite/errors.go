package sqlite

import (
	"errors"
	"syscall"

	"github.com/mattn/go-sqlite3"

	"dbio/internal/engine/txerr"
)

// ClassifyError implements txerr.ErrorClassifier by SQLite's result codes:
// a busy or locked database is tried again; a full disk, an I/O error, a
// corrupt or unopenable file stop the database's work. An embedded
// database has no connection to lose.
func (i *Instance) ClassifyError(err error) txerr.Class { return classify(err) }

// DiskFull implements txerr.FullDetector by SQLITE_FULL, and by an I/O
// error whose extended code is a failed write or fsync on a full disk.
func (i *Instance) DiskFull(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrFull || se.SystemErrno == syscall.ENOSPC)
}

func classify(err error) txerr.Class {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return txerr.Retry
		case sqlite3.ErrFull, sqlite3.ErrIoErr, sqlite3.ErrCorrupt, sqlite3.ErrCantOpen, sqlite3.ErrReadonly, sqlite3.ErrNotADB:
			return txerr.Fatal
		}
	}
	return txerr.Failed
}
