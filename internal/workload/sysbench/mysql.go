package sysbench

import (
	"dbio/internal/engine"
	"dbio/internal/engine/mysql"
	"dbio/internal/workload/txerr"
)

func init() {
	registerDialect("mariadb", newMySQLDialect)
	registerDialect("mysql", newMySQLDialect)
}

func newMySQLDialect(inst engine.Instance) *dialect {
	return &dialect{
		// As sysbench's mysql driver creates it.
		columns:         "id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)",
		tableSuffix:     " ENGINE = InnoDB",
		beginRead:       "BEGIN",
		beginWrite:      "BEGIN",
		analyze:         func(table string) string { return "ANALYZE TABLE " + table },
		loadWorkers:     4,
		classify:        txerr.For(inst),
		tooManyPrepared: mysql.TooManyPrepared,
		notes: []string{
			"MariaDB: statements are server-side prepared, as sysbench's default --db-ps-mode=auto does; a statement over max_prepared_stmt_count is sent unprepared. Deadlocks (1213), lock wait timeouts (1205) and 'record has changed' (1020) are rolled back and the transaction runs again: sysbench 1.0's default --mysql-ignore-errors.",
		},
	}
}
