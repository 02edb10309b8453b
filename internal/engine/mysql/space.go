package mysql

import (
	"dbio/internal/engine"
	"dbio/internal/units"
)

var _ engine.SpaceNeeds = (*Engine)(nil)

// The files an InnoDB server creates whatever the data, as a fresh MariaDB
// 10.11 instance with dbio's settings has them: the redo log at its full
// size from the first start (ib_logfile0, innodb_log_file_size, which dbio
// sets to 1 GB for MariaDB; MySQL 8.0.30 and later size it with
// innodb_redo_log_capacity, 100 MB by default, which dbio leaves), the
// system and temporary tablespaces at their initial 12 MB each (ibdata1,
// ibtmp1), and the system schemas and Aria's log, about 8 MB.
const (
	mysqlRedo          = 100 << 20
	innodbSystemFiles  = 12<<20 + 12<<20 + 8<<20
	innodbSystemFilesW = "InnoDB's system and temporary tablespaces and the system schemas"
)

// SpaceNeed implements engine.SpaceNeeds: the redo log, on the log target
// when there is one, and the system files beside the data. The engine's
// name decides which server's redo log size is counted, as it decides
// which server is started when both are installed.
func (e *Engine) SpaceNeed(o engine.Options, _ uint64) []engine.EngineFiles {
	redo := engine.EngineFiles{Bytes: managedBytes(mariadb, "innodb_log_file_size"), What: "MariaDB's redo log (innodb_log_file_size, as dbio sets it)", OnLog: true}
	if e.Name() == string(mysql) {
		redo.Bytes, redo.What = mysqlRedo, "MySQL's redo log (innodb_redo_log_capacity's default)"
	}
	for k, v := range o.Settings {
		n, err := units.ParseBytes(v)
		if err != nil || n <= 0 {
			continue
		}
		switch {
		case settingNames.Same(k, "innodb_log_file_size"):
			redo.Bytes, redo.What = uint64(n), "the redo log (innodb_log_file_size setting)"
		case settingNames.Same(k, "innodb_redo_log_capacity"):
			redo.Bytes, redo.What = uint64(n), "the redo log (innodb_redo_log_capacity setting)"
		}
	}
	return []engine.EngineFiles{redo, {Bytes: innodbSystemFiles, What: innodbSystemFilesW}}
}

// managedBytes is the size dbio's configuration of a managed server of
// flavour f gives setting name (0 when it sets none), so that the space
// counted is the space the server it starts will take.
func managedBytes(f flavour, name string) uint64 {
	for _, st := range benchmarkSettings(f, places{}, 0, 0) {
		if st.Name == name {
			if n, err := units.ParseBytes(st.Value); err == nil && n > 0 {
				return uint64(n)
			}
		}
	}
	return 0
}
