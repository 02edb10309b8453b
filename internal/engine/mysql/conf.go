package mysql

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// setting is one my.cnf option dbio writes, and why. An empty value is a
// switch written without "=" (skip-log-bin).
type setting struct {
	name, value, why string
}

// places are the paths and port a managed server is configured with.
type places struct {
	data, redo, socket, pidFile string
	port                        int
}

// benchmarkSettings are dbio's choices for a benchmark server. Durability
// stays at the safe defaults (innodb_flush_log_at_trx_commit=1, doublewrite
// on): nothing here trades safety for speed.
func benchmarkSettings(f flavour, at places, maxConnections int, bufferPool int64) []setting {
	s := []setting{
		{"datadir", at.data, "dbio's own directory on the data target"},
		{"socket", at.socket, "dbio's own socket directory"},
		{"pid-file", at.pidFile, ""},
		{"port", strconv.Itoa(at.port), "a free port, never the system server's"},
		{"bind-address", "127.0.0.1", "reachable from this machine only"},
		{"skip-name-resolve", "ON", "no DNS lookup per connection"},
		{"max_connections", strconv.Itoa(maxConnections), "room for every virtual user plus monitoring"},
		{"max_allowed_packet", "64M", "room for multi-row inserts when loading"},
	}
	if at.redo != "" {
		s = append(s, setting{"innodb_log_group_home_dir", at.redo, "redo log on the log target"})
	}
	switch f {
	case mariadb:
		s = append(s, setting{"innodb_log_file_size", "1G", "checkpoints not forced every few seconds by a small redo log (default 96M)"})
	case mysql:
		// MySQL sizes its redo log with innodb_redo_log_capacity from 8.0.30
		// and rejects it before, so its default stays.
		s = append(s, setting{"mysqlx", "OFF", "no X Protocol listener on all interfaces"})
	}
	if bufferPool > 0 {
		s = append(s, setting{"innodb_buffer_pool_size", cnfSize(bufferPool), "--buffer-pool"})
	}
	return s
}

// preallocateSetting is what --preallocate means to InnoDB: tablespaces grow
// in 256 MB extensions (the default is 64 MB for the system tablespace and
// page-by-page growth early on for file-per-table), so they take fewer,
// larger extents. The redo log is always preallocated at its full size.
var preallocateSetting = setting{"innodb_autoextend_increment", "256", "--preallocate: grow tablespaces 256 MB at a time"}

// cnfSize writes a byte count with the largest suffix that keeps it exact.
func cnfSize(b int64) string {
	switch {
	case b%(1<<30) == 0:
		return fmt.Sprintf("%dG", b>>30)
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dM", b>>20)
	case b%(1<<10) == 0:
		return fmt.Sprintf("%dK", b>>10)
	default:
		return strconv.FormatInt(b, 10)
	}
}

var optionNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// sameOption compares option names the way the server does: dashes and
// underscores are interchangeable, case does not matter.
func sameOption(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "_")) }
	return norm(a) == norm(b)
}

// withUserSettings applies the user's options over dbio's choices: a user
// option replaces dbio's of the same name, others follow in name order.
func withUserSettings(base []setting, user map[string]string) ([]setting, error) {
	names := make([]string, 0, len(user))
	for n := range user {
		names = append(names, n)
	}
	sort.Strings(names)
	out := append([]setting(nil), base...)
	for _, n := range names {
		v := user[n]
		if !optionNameRE.MatchString(n) {
			return nil, fmt.Errorf("mariadb setting %q is not an option name: use the my.cnf name, e.g. innodb_io_capacity=2000", n)
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return nil, fmt.Errorf("mariadb setting %s: the value may not contain a line break", n)
		}
		replaced := false
		for i := range out {
			if sameOption(out[i].name, n) {
				out[i] = setting{n, v, "set by the user"}
				replaced = true
			}
		}
		if !replaced {
			out = append(out, setting{n, v, "set by the user"})
		}
	}
	return out, nil
}

// renderCnf writes the server's option file. Values are written as given:
// my.cnf takes the rest of the line as the value, so the reasons go on lines
// of their own.
func renderCnf(settings []setting) string {
	var b strings.Builder
	b.WriteString("# Written by dbio at every start; edit the dbio flags, not this file.\n[mysqld]\n")
	for _, s := range settings {
		if s.why != "" {
			b.WriteString("# " + s.why + "\n")
		}
		b.WriteString(s.name)
		if s.value != "" {
			b.WriteString(" = " + s.value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// settingsMap is how settings are recorded in Info.
func settingsMap(settings []setting) map[string]string {
	m := map[string]string{}
	for _, s := range settings {
		m[s.name] = s.value
	}
	return m
}
