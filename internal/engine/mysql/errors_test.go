package mysql

import (
	"errors"
	"fmt"
	"io"
	"testing"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/workload/txerr"
)

func TestClassifyError(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("transaction: %w", err) }
	tests := []struct {
		err  error
		want txerr.Class
	}{
		{wrap(&mysqldrv.MySQLError{Number: 1213}), txerr.Retry},
		{&mysqldrv.MySQLError{Number: 1205}, txerr.Retry},
		{&mysqldrv.MySQLError{Number: 1020}, txerr.Retry},
		{&mysqldrv.MySQLError{Number: 1114}, txerr.Fatal},
		{&mysqldrv.MySQLError{Number: 1927}, txerr.Lost},
		{&mysqldrv.MySQLError{Number: 1184}, txerr.Lost},
		{mysqldrv.ErrInvalidConn, txerr.Lost},
		{wrap(io.EOF), txerr.Lost},
		{&mysqldrv.MySQLError{Number: 1064}, txerr.Failed},
		{errors.New("no rows"), txerr.Failed},
	}
	in := &Instance{}
	for _, tt := range tests {
		if got := in.ClassifyError(tt.err); got != tt.want {
			t.Errorf("%v classified %d, want %d", tt.err, got, tt.want)
		}
	}
	if !TooManyPrepared(wrap(&mysqldrv.MySQLError{Number: 1461})) || TooManyPrepared(errors.New("x")) {
		t.Error("TooManyPrepared")
	}
}
