package mysql

import (
	"errors"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine/txerr"
)

// ClassifyError implements txerr.ErrorClassifier by error number: 1213
// deadlock, 1205 lock wait timeout and 1020 record changed (sysbench 1.0's
// default --mysql-ignore-errors) are run again; 1021, 1114 and 1030 (disk
// full, table full, storage engine error) stop the database's work; 1053
// and 1077 (server shutdown), 1152, 1156 and 1184 (aborted connection) and
// 1927 (connection killed) lose the connection.
func (in *Instance) ClassifyError(err error) txerr.Class { return classify(err) }

// DiskFull implements txerr.FullDetector: 1021 is the server's disk full;
// 1114 (table full) and the storage engine's and file errors that carry the
// operating system's errno 28 (ENOSPC) are a full disk under InnoDB.
func (in *Instance) DiskFull(err error) bool {
	var me *mysqldrv.MySQLError
	if !errors.As(err, &me) {
		// A server that aborts on a failed write only drops its clients.
		return classify(err) == txerr.Lost && in.LogSays("No space left on device")
	}
	switch me.Number {
	case 1021, 1114:
		return true
	}
	return strings.Contains(me.Message, "Errcode: 28") || strings.Contains(me.Message, "error 28 ")
}

func classify(err error) txerr.Class {
	switch errno(err) {
	case 1213, 1205, 1020:
		return txerr.Retry
	case 1021, 1114, 1030:
		return txerr.Fatal
	case 1053, 1077, 1152, 1156, 1184, 1927:
		return txerr.Lost
	case 0:
		if errors.Is(err, mysqldrv.ErrInvalidConn) || txerr.LostConnection(err) {
			return txerr.Lost
		}
	}
	return txerr.Failed
}

// errno is a MariaDB or MySQL server error number, 0 for other errors.
func errno(err error) uint16 {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// TooManyPrepared reports the server refusing another prepared statement
// (MariaDB's max_prepared_stmt_count, error 1461): client sessions then
// send that statement as text (sqlclient asks the instance for this).
func (in *Instance) TooManyPrepared(err error) bool { return errno(err) == 1461 }
