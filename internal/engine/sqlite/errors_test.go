package sqlite

import (
	"database/sql/driver"
	"fmt"
	"syscall"
	"testing"

	"github.com/mattn/go-sqlite3"

	"dbio/internal/engine/txerr"
)

func TestClassifyError(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("transaction: %w", err) }
	tests := []struct {
		err  error
		want txerr.Class
	}{
		{wrap(sqlite3.Error{Code: sqlite3.ErrBusy}), txerr.Retry},
		{sqlite3.Error{Code: sqlite3.ErrLocked}, txerr.Retry},
		{sqlite3.Error{Code: sqlite3.ErrFull}, txerr.Fatal},
		{sqlite3.Error{Code: sqlite3.ErrIoErr}, txerr.Fatal},
		{sqlite3.Error{Code: sqlite3.ErrConstraint}, txerr.Failed},
		{driver.ErrBadConn, txerr.Failed},
	}
	in := &Instance{}
	for _, tt := range tests {
		if got := in.ClassifyError(tt.err); got != tt.want {
			t.Errorf("%v classified %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestDiskFull: SQLITE_FULL, or an I/O error carrying ENOSPC, is a full disk.
func TestDiskFull(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("commit: %w", sqlite3.Error{Code: sqlite3.ErrFull}), true},
		{sqlite3.Error{Code: sqlite3.ErrIoErr, SystemErrno: syscall.ENOSPC}, true},
		{sqlite3.Error{Code: sqlite3.ErrIoErr, SystemErrno: syscall.EIO}, false},
		{sqlite3.Error{Code: sqlite3.ErrBusy}, false},
	}
	in := &Instance{}
	for _, tt := range tests {
		if got := in.DiskFull(tt.err); got != tt.want {
			t.Errorf("DiskFull(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
