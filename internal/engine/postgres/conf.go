package postgres

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// setting is one postgresql.conf line dbio writes, and why.
type setting struct {
	name, value, why string
}

// confFile is the file inside the data directory that holds dbio's settings.
// It is rewritten at every start and included from postgresql.conf, so the
// instance's settings are always what this run asked for.
const confFile = "dbio.conf"

// benchmarkSettings are dbio's choices for a benchmark server. Durability
// stays at PostgreSQL's safe defaults (fsync, synchronous_commit,
// full_page_writes on): nothing here trades safety for speed.
func benchmarkSettings(port int, socketDir string, maxConnections int, bufferPool int64) []setting {
	s := []setting{
		{"listen_addresses", "127.0.0.1", "reachable from this machine only"},
		{"port", strconv.Itoa(port), "a free port, never the system server's"},
		{"unix_socket_directories", socketDir, "dbio's own socket directory"},
		{"max_connections", strconv.Itoa(maxConnections), "room for every virtual user plus monitoring"},
		{"max_wal_size", "4GB", "checkpoints paced by checkpoint_timeout rather than forced by WAL volume"},
		{"min_wal_size", "1GB", "recycle WAL segments instead of creating new ones during a run"},
	}
	if bufferPool > 0 {
		s = append(s, setting{"shared_buffers", pgSize(bufferPool), "--buffer-pool"})
	}
	return s
}

// pgSize writes a byte count in the largest unit that keeps it exact.
func pgSize(b int64) string {
	switch {
	case b%(1<<30) == 0:
		return fmt.Sprintf("%dGB", b>>30)
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dMB", b>>20)
	default:
		return fmt.Sprintf("%dkB", (b+1023)/1024)
	}
}

var settingNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// withUserSettings applies the user's settings over dbio's choices: a user
// setting replaces dbio's of the same name, others follow in name order.
func withUserSettings(base []setting, user map[string]string) ([]setting, error) {
	names := make([]string, 0, len(user))
	for n := range user {
		names = append(names, n)
	}
	sort.Strings(names)
	out := append([]setting(nil), base...)
	for _, n := range names {
		v := user[n]
		if !settingNameRE.MatchString(n) {
			return nil, fmt.Errorf("postgres setting %q is not a parameter name: use the postgresql.conf name, e.g. work_mem=64MB", n)
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return nil, fmt.Errorf("postgres setting %s: the value may not contain a line break", n)
		}
		replaced := false
		for i := range out {
			if strings.EqualFold(out[i].name, n) {
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

// renderConf writes settings as postgresql.conf lines. Every value is quoted,
// which PostgreSQL accepts for parameters of any type.
func renderConf(settings []setting) string {
	var b strings.Builder
	b.WriteString("# Written by dbio at every start; edit the dbio flags, not this file.\n")
	for _, s := range settings {
		fmt.Fprintf(&b, "%s = '%s'\t# %s\n", s.name, strings.ReplaceAll(s.value, "'", "''"), s.why)
	}
	return b.String()
}

// initdbSettings are the choices dbio makes when creating an instance, recorded
// with the server settings: the C locale sorts by bytes, the same on every
// machine, and avoids collation costs that would be measured as storage.
var initdbSettings = []setting{
	{"initdb.locale", "C", "byte order, identical everywhere"},
	{"initdb.encoding", "UTF8", ""},
}

// settingsMap is how settings are recorded in Info.
func settingsMap(lists ...[]setting) map[string]string {
	m := map[string]string{}
	for _, l := range lists {
		for _, s := range l {
			m[s.name] = s.value
		}
	}
	return m
}
