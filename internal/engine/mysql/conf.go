package mysql

import (
	"regexp"
	"strconv"
	"strings"

	"dbio/internal/engine/server"
	"dbio/internal/units"
)

// places are the paths and port a managed server is configured with.
type places struct {
	data, redo, socket, pidFile string
	port                        int
}

// benchmarkSettings are dbio's choices for a benchmark server. Durability
// stays at the safe defaults (innodb_flush_log_at_trx_commit=1, doublewrite
// on): nothing here trades safety for speed.
func benchmarkSettings(f flavour, at places, maxConnections int, bufferPool int64) []server.Setting {
	s := []server.Setting{
		{Name: "datadir", Value: at.data, Why: "dbio's own directory on the data target"},
		{Name: "socket", Value: at.socket, Why: "dbio's own socket directory"},
		{Name: "pid-file", Value: at.pidFile, Why: ""},
		{Name: "port", Value: strconv.Itoa(at.port), Why: "a free port, never the system server's"},
		{Name: "bind-address", Value: "127.0.0.1", Why: "reachable from this machine only"},
		{Name: "skip-name-resolve", Value: "ON", Why: "no DNS lookup per connection"},
		{Name: "max_connections", Value: strconv.Itoa(maxConnections), Why: "room for every virtual user plus monitoring"},
		{Name: "max_allowed_packet", Value: "64M", Why: "room for multi-row inserts when loading"},
	}
	if at.redo != "" {
		s = append(s, server.Setting{Name: "innodb_log_group_home_dir", Value: at.redo, Why: "redo log on the log target"})
	}
	switch f {
	case mariadb:
		s = append(s, server.Setting{Name: "innodb_log_file_size", Value: "1G", Why: "checkpoints not forced every few seconds by a small redo log (default 96M)"})
	case mysql:
		// MySQL sizes its redo log with innodb_redo_log_capacity from 8.0.30
		// and rejects it before, so its default stays.
		s = append(s, server.Setting{Name: "mysqlx", Value: "OFF", Why: "no X Protocol listener on all interfaces"})
	}
	if bufferPool > 0 {
		s = append(s, server.Setting{Name: "innodb_buffer_pool_size", Value: cnfSize(bufferPool), Why: "--buffer-pool"})
	}
	return s
}

// preallocateSetting is what --preallocate means to InnoDB: tablespaces grow
// in 256 MB extensions (the default is 64 MB for the system tablespace and
// page-by-page growth early on for file-per-table), so they take fewer,
// larger extents. The redo log is always preallocated at its full size.
var preallocateSetting = server.Setting{Name: "innodb_autoextend_increment", Value: "256", Why: "--preallocate: grow tablespaces 256 MB at a time"}

// cnfSize writes a byte count with the largest suffix that keeps it exact,
// else in bytes.
func cnfSize(b int64) string {
	if s, ok := units.ExactBytes(b, [3]string{"G", "M", "K"}); ok {
		return s
	}
	return strconv.FormatInt(b, 10)
}

// settingNames are my.cnf's option names: dashes and underscores are
// interchangeable, case does not matter, as the server reads them.
var settingNames = server.SettingNames{
	Engine:   "mariadb",
	Valid:    regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`),
	NotAName: "an option name: use the my.cnf name, e.g. innodb_io_capacity=2000",
	Same:     func(a, b string) bool { return normName(a) == normName(b) },
	Norm:     normName,
	Bases:    optionBases,
	Classes:  settingClasses,
}

// renderCnf writes the server's option file. Values are written as given:
// my.cnf takes the rest of the line as the value, so the reasons go on lines
// of their own, and an empty value is a switch written without "="
// (skip-log-bin). A setting holding a control character is refused: a line
// break in a value (a target's path, say) would start an option of its own.
func renderCnf(settings []server.Setting) (string, error) {
	if err := server.CheckWritten(settings); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# Written by dbio at every start; edit the dbio flags, not this file.\n[mysqld]\n")
	for _, s := range settings {
		if s.Why != "" {
			b.WriteString("# " + s.Why + "\n")
		}
		b.WriteString(s.Name)
		if s.Value != "" {
			b.WriteString(" = " + s.Value)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
