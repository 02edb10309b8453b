package txerr

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

func TestClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("transaction: %w", err) }
	tests := []struct {
		engine string
		err    error
		want   Class
	}{
		{"postgres", wrap(&pgconn.PgError{Code: "40P01"}), Retry},
		{"postgres", &pgconn.PgError{Code: "23505"}, Retry},
		{"postgres", &pgconn.PgError{Code: "53100"}, Fatal},
		{"postgres", &pgconn.PgError{Code: "57P01"}, Lost},
		{"postgres", &pgconn.PgError{Code: "42601"}, Failed},
		{"postgres", wrap(driver.ErrBadConn), Lost},
		{"mariadb", wrap(&mysqldrv.MySQLError{Number: 1213}), Retry},
		{"mysql", &mysqldrv.MySQLError{Number: 1205}, Retry},
		{"mariadb", &mysqldrv.MySQLError{Number: 1114}, Fatal},
		{"mariadb", mysqldrv.ErrInvalidConn, Lost},
		{"mariadb", &mysqldrv.MySQLError{Number: 1064}, Failed},
		{"sqlite", wrap(sqlite3.Error{Code: sqlite3.ErrBusy}), Retry},
		{"sqlite", sqlite3.Error{Code: sqlite3.ErrFull}, Fatal},
		{"sqlite", sqlite3.Error{Code: sqlite3.ErrConstraint}, Failed},
		{"oracle", driver.ErrBadConn, Lost},
		{"oracle", errors.New("whatever"), Failed},
	}
	for _, tt := range tests {
		if got := For(tt.engine)(tt.err); got != tt.want {
			t.Errorf("%s: %v classified %d, want %d", tt.engine, tt.err, got, tt.want)
		}
	}
	if !TooManyPrepared(wrap(&mysqldrv.MySQLError{Number: 1461})) || TooManyPrepared(errors.New("x")) {
		t.Error("TooManyPrepared")
	}
}
