package sysbench

import (
	"errors"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
)

func init() {
	registerDialect("mariadb", newMySQLDialect)
	registerDialect("mysql", newMySQLDialect)
}

func newMySQLDialect(engine.Instance) *dialect {
	return &dialect{
		// As sysbench's mysql driver creates it.
		columns:         "id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)",
		tableSuffix:     " ENGINE = InnoDB",
		beginRead:       "BEGIN",
		beginWrite:      "BEGIN",
		analyze:         func(table string) string { return "ANALYZE TABLE " + table },
		loadWorkers:     4,
		classify:        classifyMySQL,
		tooManyPrepared: func(err error) bool { return mysqlErrno(err) == 1461 }, // ER_MAX_PREPARED_STMT_COUNT_REACHED
		notes: []string{
			"MariaDB: statements are server-side prepared, as sysbench's default --db-ps-mode=auto does; a statement over max_prepared_stmt_count is sent unprepared. Deadlocks (1213), lock wait timeouts (1205) and 'record has changed' (1020) are rolled back and the transaction runs again: sysbench 1.0's default --mysql-ignore-errors.",
		},
	}
}

func mysqlErrno(err error) uint16 {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func classifyMySQL(err error) errClass {
	switch mysqlErrno(err) {
	case 1213, 1205, 1020:
		return errRetry
	case 1021, 1114, 1030: // disk full, table full, storage engine error
		return errFatal
	case 1053, 1927: // server shutdown, connection killed
		return errLost
	case 0:
		if errors.Is(err, mysqldrv.ErrInvalidConn) || lostConnection(err) {
			return errLost
		}
	}
	return errFailed
}
