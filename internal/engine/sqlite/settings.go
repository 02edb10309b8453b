package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mattn/go-sqlite3"

	"dbio/internal/controlchars"
	"dbio/internal/engine"
)

var _ engine.SettingsChecker = Engine{}

// settingClasses are the PRAGMAs dbio sets on every connection for the
// user, each with what its value names. The rest of SQLite's PRAGMAs are
// refused: they query or change a database (integrity_check, writable_schema)
// rather than set how it runs, or name files beyond dbio's directory.
var settingClasses = map[string]engine.SettingClass{
	"journal_mode":       {},
	"synchronous":        {},
	"busy_timeout":       {},
	"cache_size":         {},
	"mmap_size":          {},
	"page_size":          {},
	"wal_autocheckpoint": {},
	// Where SQLite writes its temporary files: inside dbio's directory only.
	"temp_store_directory": {Kind: engine.Path},
}

// pragmaValue is the form of a PRAGMA's value dbio passes on: a number or
// a word, which cannot end the statement and start another.
var pragmaValue = regexp.MustCompile(`^(-?[0-9]+|[A-Za-z_]+)$`)

// SettingProblems implements engine.SettingsChecker: each setting must be
// one of the PRAGMAs dbio takes (SQLite's own list says which names exist
// at all), with a number or a word for its value, and a directory inside
// dbio's directory on the target for a PRAGMA that names one.
func (Engine) SettingProblems(ctx context.Context, settings map[string]string, on engine.Confinement) []error {
	return settingProblems(ctx, settings, on)
}

func settingProblems(ctx context.Context, settings map[string]string, on engine.Confinement) []error {
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	taken := make([]string, 0, len(settingClasses))
	for n := range settingClasses {
		taken = append(taken, n)
	}
	sort.Strings(taken)
	var out []error
	var pragmas map[string]bool
	for _, name := range names {
		value := settings[name]
		if err := controlchars.Check(name + "=" + value); err != nil {
			out = append(out, fmt.Errorf("%q: the setting %w", name+"="+value, err))
			continue
		}
		class, ok := settingClasses[name]
		if !ok {
			if pragmas == nil {
				pragmas = pragmaList(ctx)
			}
			if pragmas[strings.ToLower(name)] {
				out = append(out, fmt.Errorf("%s=%s: dbio does not set SQLite's PRAGMA %s: use one of %s", name, value, name, strings.Join(taken, ", ")))
			} else {
				out = append(out, fmt.Errorf("%s=%s: SQLite has no PRAGMA %q%s: use one of %s", name, value, name, engine.Closest(name, taken), strings.Join(taken, ", ")))
			}
			continue
		}
		if class.Kind == engine.Plain && !pragmaValue.MatchString(value) {
			out = append(out, fmt.Errorf("%s=%s: give a number or a word (e.g. journal_mode=WAL, cache_size=-65536)", name, value))
			continue
		}
		if err := class.Problem(value, on); err != nil {
			out = append(out, fmt.Errorf("%s=%s: %w", name, value, err))
		}
	}
	return out
}

// pragmaList is SQLite's own list of PRAGMAs, as the library dbio runs
// reports it; empty when it cannot be read.
func pragmaList(ctx context.Context) map[string]bool {
	out := map[string]bool{}
	db := sql.OpenDB(connector{dsn: "file::memory:", drv: &sqlite3.SQLiteDriver{}})
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_pragma_list")
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			out[n] = true
		}
	}
	return out
}

// pragmaText is a setting's value as the PRAGMA statement takes it: a
// directory quoted as an SQL string, a number or a word as it is.
func pragmaText(name, value string) string {
	if settingClasses[name].Kind == engine.Path {
		return "'" + strings.ReplaceAll(value, "'", "''") + "'"
	}
	return value
}
