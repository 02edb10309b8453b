package txerr

import (
	"errors"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

func init() {
	register("sqlite", sqlite)
	register("postgres", postgres)
	register("mariadb", mysql)
	register("mysql", mysql)
}

func sqlite(err error) Class {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return Retry
		case sqlite3.ErrFull, sqlite3.ErrIoErr, sqlite3.ErrCorrupt, sqlite3.ErrCantOpen, sqlite3.ErrReadonly, sqlite3.ErrNotADB:
			return Fatal
		}
	}
	return Failed
}

// postgres sorts by SQLSTATE: 40P01 deadlock, 40001 serialization failure,
// 23505 unique violation (the retries of sysbench's pgsql driver), 53100 disk
// full, classes 58 and XX system and internal errors, 08 connection
// exceptions and 57P server shutdown.
func postgres(err error) Class {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40P01" || pe.Code == "40001" || pe.Code == "23505":
			return Retry
		case pe.Code == "53100" || strings.HasPrefix(pe.Code, "58") || strings.HasPrefix(pe.Code, "XX"):
			return Fatal
		case strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P"):
			return Lost
		}
		return Failed
	}
	if LostConnection(err) {
		return Lost
	}
	return Failed
}

// MySQLErrno is a MariaDB or MySQL server error number, 0 for other errors.
func MySQLErrno(err error) uint16 {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// mysql sorts by error number: 1213 deadlock, 1205 lock wait timeout, 1020
// record changed (sysbench 1.0's default --mysql-ignore-errors), 1021, 1114
// and 1030 disk full, table full and storage engine error, 1053 and 1927
// server shutdown and connection killed.
func mysql(err error) Class {
	switch MySQLErrno(err) {
	case 1213, 1205, 1020:
		return Retry
	case 1021, 1114, 1030:
		return Fatal
	case 1053, 1927:
		return Lost
	case 0:
		if errors.Is(err, mysqldrv.ErrInvalidConn) || LostConnection(err) {
			return Lost
		}
	}
	return Failed
}

// TooManyPrepared reports a server refusing another prepared statement
// (MariaDB's max_prepared_stmt_count, error 1461).
func TooManyPrepared(err error) bool { return MySQLErrno(err) == 1461 }
