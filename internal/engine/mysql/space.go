package mysql

import (
	"strconv"
	"strings"

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

// MariaDB before 11.0 keeps its undo logs in the system tablespace
// (ibdata1, innodb_undo_tablespaces=0), which grows by whole
// innodb_autoextend_increment steps (64 MB by default, 256 MB as
// --preallocate sets it) and never shrinks. The undo a run holds at once is
// that of its open transactions: TPC-C's loader writes one warehouse per
// transaction on two loaders, so it does not grow with the scale, and one
// step is counted whatever the data. Measured with MariaDB 10.11 on a
// 2-core machine (2026-11-27), ibdata1 after
//
//	dbio tpcc --engine mariadb --target T --warehouses W --users 1 --ramp-time 2s --runtime 5s
//
// is 76 MiB (12 MiB + one 64 MiB step) at W = 1 and at W = 4, still 76 MiB
// after --warehouses 4 --users 8 --runtime 60s, and 268 MiB (12 MiB + 256
// MiB) at W = 1 with --preallocate. MySQL keeps its undo in tablespaces of
// its own (undo_001, undo_002), which this estimate does not measure.
const (
	autoextendDefaultMB = 64
	undoGrowthWhat      = "ibdata1's growth with the undo logs (one innodb_autoextend_increment step"
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
	for _, name := range []string{"innodb_log_file_size", "innodb_redo_log_capacity"} {
		if v, ok := settingNames.Value(o.Settings, name); ok {
			if n, err := units.ParseBytes(v); err == nil && n > 0 {
				redo.Bytes, redo.What = uint64(n), "the redo log ("+name+" setting)"
			}
		}
	}
	files := []engine.EngineFiles{redo, {Bytes: innodbSystemFiles, What: innodbSystemFilesW}}
	if e.Name() != string(mysql) {
		files = append(files, undoGrowth(o))
	}
	return files
}

// undoGrowth is the system tablespace's growth with MariaDB's undo logs:
// one autoextend step, of the size the server will use (see
// autoextendDefaultMB).
func undoGrowth(o engine.Options) engine.EngineFiles {
	mb, from := uint64(autoextendDefaultMB), "64M by default"
	if o.Preallocate != 0 {
		if n, err := strconv.ParseUint(preallocateSetting.Value, 10, 64); err == nil {
			mb, from = n, preallocateSetting.Value+"M with --preallocate"
		}
	}
	if v, ok := settingNames.Value(o.Settings, "innodb_autoextend_increment"); ok {
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
			mb, from = n, v+"M as set"
		}
	}
	return engine.EngineFiles{Bytes: mb << 20, What: undoGrowthWhat + ", " + from + ")"}
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
