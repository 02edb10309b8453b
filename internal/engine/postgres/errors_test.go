package postgres

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"dbio/internal/workload/txerr"
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
