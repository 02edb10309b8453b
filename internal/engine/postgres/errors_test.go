package postgres

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"dbio/internal/engine/txerr"
)

func TestClassifyError(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("transaction: %w", err) }
	tests := []struct {
		err  error
		want txerr.Class
	}{
		{wrap(&pgconn.PgError{Code: "40P01"}), txerr.Retry},
		{&pgconn.PgError{Code: "40001"}, txerr.Retry},
		{&pgconn.PgError{Code: "55P03"}, txerr.Retry},
		{&pgconn.PgError{Code: "23505"}, txerr.Retry},
		{&pgconn.PgError{Code: "53100"}, txerr.Fatal},
		{&pgconn.PgError{Code: "58030"}, txerr.Fatal},
		{&pgconn.PgError{Code: "XX001"}, txerr.Fatal},
		{&pgconn.PgError{Code: "57P01"}, txerr.Lost},
		{&pgconn.PgError{Code: "08006"}, txerr.Lost},
		{&pgconn.PgError{Code: "42601"}, txerr.Failed},
		{wrap(driver.ErrBadConn), txerr.Lost},
		{wrap(pgconn.ErrConnClosed), txerr.Lost},
		{errors.New("no rows"), txerr.Failed},
	}
	in := &Instance{}
	for _, tt := range tests {
		if got := in.ClassifyError(tt.err); got != tt.want {
			t.Errorf("%v classified %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestDiskFull: SQLSTATE 53100 is a full disk whatever its message, as when
// a block is only partly written; other resource errors are not.
func TestDiskFull(t *testing.T) {
	partial := &pgconn.PgError{Code: "53100", Message: "could not extend file \"base/16384/16397\": wrote only 4096 of 8192 bytes at block 1012"}
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("%w: new_order: %w", errors.New("session lost"), partial), true},
		{&pgconn.PgError{Code: "53200"}, false},
		{&pgconn.PgError{Code: "53300"}, false},
		{errors.New("could not extend file"), false},
	}
	in := &Instance{}
	for _, tt := range tests {
		if got := in.DiskFull(tt.err); got != tt.want {
			t.Errorf("DiskFull(%v) = %v, want %v", tt.err, got, tt.want)
		}
		if got := txerr.DiskFull(in, tt.err); got != tt.want {
			t.Errorf("txerr.DiskFull(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
