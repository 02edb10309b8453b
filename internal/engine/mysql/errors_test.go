package mysql

import (
	"errors"
	"fmt"
	"io"
	"testing"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine/txerr"
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
	if !in.TooManyPrepared(wrap(&mysqldrv.MySQLError{Number: 1461})) || in.TooManyPrepared(errors.New("x")) {
		t.Error("TooManyPrepared")
	}
}

// TestDiskFull: the server's disk-full and table-full numbers, and errno 28
// inside a storage engine's or a file's error, are a full disk.
func TestDiskFull(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("load: %w", &mysqldrv.MySQLError{Number: 1021}), true},
		{&mysqldrv.MySQLError{Number: 1114, Message: "The table 'order_line' is full"}, true},
		{&mysqldrv.MySQLError{Number: 1030, Message: "Got error 28 \"No space left on device\" from storage engine InnoDB"}, true},
		{&mysqldrv.MySQLError{Number: 3, Message: "Error writing file './tpcc/#sql-1.frm' (Errcode: 28 \"No space left on device\")"}, true},
		{&mysqldrv.MySQLError{Number: 1030, Message: "Got error 168 \"Unknown (generic) error from engine\" from storage engine InnoDB"}, false},
		{&mysqldrv.MySQLError{Number: 1213}, false},
		{io.EOF, false},
	}
	in := &Instance{}
	for _, tt := range tests {
		if got := in.DiskFull(tt.err); got != tt.want {
			t.Errorf("DiskFull(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
