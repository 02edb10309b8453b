package server

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Setting is one setting dbio writes into a server's configuration file, and
// why. The engine renders it in its file's syntax.
type Setting struct {
	Name, Value, Why string
}

// SettingNames is how an engine names its settings, so that the user's can
// be checked and merged over dbio's choices.
type SettingNames struct {
	// Engine names the engine in messages.
	Engine string
	// Valid matches a well-formed name.
	Valid *regexp.Regexp
	// NotAName completes "<engine> setting "x" is not ..." with the kind
	// of name expected and an example.
	NotAName string
	// Same says whether two names are one setting.
	Same func(a, b string) bool
}

// Apply applies the user's settings over base, dbio's choices: a user
// setting replaces dbio's of the same name, others follow in name order.
func (sn SettingNames) Apply(base []Setting, user map[string]string) ([]Setting, error) {
	names := make([]string, 0, len(user))
	for n := range user {
		names = append(names, n)
	}
	sort.Strings(names)
	out := append([]Setting(nil), base...)
	for _, n := range names {
		v := user[n]
		if !sn.Valid.MatchString(n) {
			return nil, fmt.Errorf("%s setting %q is not %s", sn.Engine, n, sn.NotAName)
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return nil, fmt.Errorf("%s setting %s: the value may not contain a line break", sn.Engine, n)
		}
		replaced := false
		for i := range out {
			if sn.Same(out[i].Name, n) {
				out[i] = Setting{n, v, "set by the user"}
				replaced = true
			}
		}
		if !replaced {
			out = append(out, Setting{n, v, "set by the user"})
		}
	}
	return out, nil
}

// Value is the value the user's settings give the setting name, matched
// as the engine matches names: of several spellings of one setting, the
// one Apply writes last (in name order), which is the one the server
// reads. False when none gives it.
func (sn SettingNames) Value(user map[string]string, name string) (string, bool) {
	found, value, ok := "", "", false
	for k, v := range user {
		if sn.Same(k, name) && (!ok || k > found) {
			found, value, ok = k, v, true
		}
	}
	return value, ok
}

// SettingsMap is how settings are recorded in an instance's Info.
func SettingsMap(lists ...[]Setting) map[string]string {
	m := map[string]string{}
	for _, l := range lists {
		for _, s := range l {
			m[s.Name] = s.Value
		}
	}
	return m
}

// RecordDefault adds to settings the value of a setting dbio left at the
// engine's default, as the running server reports it through query (one
// row, one column), marked "(engine default)": run.json then says what the
// run used (the buffer pool, say) whether or not the user chose it. A
// setting already recorded, or one the server does not report, is left as
// it is.
func RecordDefault(ctx context.Context, db *sql.DB, settings map[string]string, name, query string, format func(string) string) map[string]string {
	if _, ok := settings[name]; ok || db == nil {
		return settings
	}
	var v string
	if err := db.QueryRowContext(ctx, query).Scan(&v); err != nil {
		return settings
	}
	if format != nil {
		v = format(v)
	}
	if settings == nil {
		settings = map[string]string{}
	}
	settings[name] = v + " (engine default)"
	return settings
}
