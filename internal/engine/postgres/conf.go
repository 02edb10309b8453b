package postgres

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"dbio/internal/engine/server"
	"dbio/internal/units"
)

// confFile is the file inside the data directory that holds dbio's settings.
// It is rewritten at every start and included from postgresql.conf, so the
// instance's settings are always what this run asked for.
const confFile = "dbio.conf"

// benchmarkSettings are dbio's choices for a benchmark server. Durability
// stays at PostgreSQL's safe defaults (fsync, synchronous_commit,
// full_page_writes on): nothing here trades safety for speed.
func benchmarkSettings(port int, socketDir string, maxConnections int, bufferPool int64) []server.Setting {
	s := []server.Setting{
		{Name: "listen_addresses", Value: "127.0.0.1", Why: "reachable from this machine only"},
		{Name: "port", Value: strconv.Itoa(port), Why: "a free port, never the system server's"},
		{Name: "unix_socket_directories", Value: socketDir, Why: "dbio's own socket directory"},
		{Name: "max_connections", Value: strconv.Itoa(maxConnections), Why: "room for every virtual user plus monitoring"},
		{Name: "max_wal_size", Value: "4GB", Why: "checkpoints paced by checkpoint_timeout rather than forced by WAL volume"},
		{Name: "min_wal_size", Value: "1GB", Why: "recycle WAL segments instead of creating new ones during a run"},
	}
	if bufferPool > 0 {
		s = append(s, server.Setting{Name: "shared_buffers", Value: pgSize(bufferPool), Why: "--buffer-pool"})
	}
	return s
}

// pgSize writes a byte count in the largest unit that keeps it exact, else
// in whole kB, rounded up (never less than asked).
func pgSize(b int64) string {
	if s, ok := units.ExactBytes(b, [3]string{"GB", "MB", "kB"}); ok {
		return s
	}
	return fmt.Sprintf("%dkB", (b+1023)/1024)
}

// settingNames are postgresql.conf's parameter names; case does not matter.
var settingNames = server.SettingNames{
	Engine:   "postgres",
	Valid:    regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`),
	NotAName: "a parameter name: use the postgresql.conf name, e.g. work_mem=64MB",
	Same:     strings.EqualFold,
	Norm:     strings.ToLower,
	Classes:  settingClasses,
}

// confValue quotes a value for postgresql.conf, which reads backslash
// escapes inside quotes: both the quote and the backslash are doubled, so
// that the server reads the value exactly as given.
var confValue = strings.NewReplacer(`'`, `''`, `\`, `\\`)

// renderConf writes settings as postgresql.conf lines. Every value is quoted,
// which PostgreSQL accepts for parameters of any type. A setting holding a
// control character is refused: a line break would start a line of its own.
func renderConf(settings []server.Setting) (string, error) {
	if err := server.CheckWritten(settings); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# Written by dbio at every start; edit the dbio flags, not this file.\n")
	for _, s := range settings {
		fmt.Fprintf(&b, "%s = '%s'\t# %s\n", s.Name, confValue.Replace(s.Value), s.Why)
	}
	return b.String(), nil
}

// initdbSettings are the choices dbio makes when creating an instance, recorded
// with the server settings: the C locale sorts by bytes, the same on every
// machine, and avoids collation costs that would be measured as storage.
var initdbSettings = []server.Setting{
	{Name: "initdb.locale", Value: "C", Why: "byte order, identical everywhere"},
	{Name: "initdb.encoding", Value: "UTF8", Why: ""},
}
