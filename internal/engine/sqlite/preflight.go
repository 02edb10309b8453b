package sqlite

import "dbio/internal/engine"

var _ engine.Layout = Engine{}

// databaseSuffixes are the files SQLite keeps for one database: the database
// itself, its WAL and shared-memory index, and a rollback journal.
var databaseSuffixes = []string{"", "-wal", "-shm", "-journal"}

// Subdirs implements engine.Layout: one directory on the data target; the
// WAL sits beside the database file.
func (Engine) Subdirs(bool) (data, log []string) { return []string{subdir}, nil }

// Replaces implements engine.Layout: a fresh start removes the files of the
// one database it opens, not the other workloads' databases beside it.
func (Engine) Replaces(o engine.Options) []string {
	var out []string
	for _, suffix := range databaseSuffixes {
		out = append(out, subdir+"/"+databaseFile(o)+suffix)
	}
	return out
}

// databaseFile is the database's file name in dbio's sqlite directory.
func databaseFile(o engine.Options) string {
	name := o.Database
	if name == "" {
		name = "dbio"
	}
	return name + ".db"
}
