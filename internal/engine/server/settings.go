package server

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"dbio/internal/controlchars"
	"dbio/internal/engine"
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
	// Norm spells a name as Classes and the server's list (Known) do.
	Norm func(name string) string
	// Bases are the settings a name may stand for, most literal first:
	// the name itself and, for MariaDB, what is left of it without a
	// prefix the server reads (loose-, skip-, ...). Nil: the name alone.
	Bases func(norm string) []string
	// Classes say what the value of each setting that is not Plain
	// names (engine.SettingClass), and every free-text setting of the
	// engine's reviewed version: a free-text setting of the server's list
	// that is not in it is refused, as dbio cannot tell what it names.
	Classes map[string]engine.SettingClass
}

// norm spells name as the engine's tables do.
func (sn SettingNames) norm(name string) string {
	if sn.Norm == nil {
		return strings.ToLower(name)
	}
	return sn.Norm(name)
}

// bases are the settings the normalized name n may stand for.
func (sn SettingNames) bases(n string) []string {
	if sn.Bases == nil {
		return []string{n}
	}
	return sn.Bases(n)
}

// Known are the settings an installed server takes, as it lists them.
type Known struct {
	// Server names the server whose list this is: "PostgreSQL 15".
	Server string
	// Names maps each setting's normalized name to its own spelling.
	Names map[string]string
	// Text are the normalized names of the settings whose value is free
	// text (not a number, a switch or one of a fixed list).
	Text map[string]bool
}

// ListSettings lists the settings the installed server takes.
type ListSettings func(ctx context.Context) (Known, error)

// knownCache keeps the installed server's list once it has been read:
// a suite checks the settings of many runs, each a program run away.
type knownCache struct {
	once  sync.Once
	known Known
	err   error
}

func (c *knownCache) get(ctx context.Context, list ListSettings) (Known, error) {
	c.once.Do(func() { c.known, c.err = list(ctx) })
	return c.known, c.err
}

// SettingProblems implements engine.SettingsChecker for a server engine:
// every setting's name is checked against the installed server's own
// list, and every value against the engine's classes.
func (e *Engine) SettingProblems(ctx context.Context, settings map[string]string, on engine.Confinement) []error {
	if len(settings) == 0 {
		return nil
	}
	var known *Known
	var out []error
	if e.own.ListSettings != nil {
		k, err := e.known.get(ctx, e.own.ListSettings)
		if err != nil {
			out = append(out, fmt.Errorf("the %s settings cannot be checked against the server's own list: %w", e.own.Label, err))
		} else {
			known = &k
		}
	}
	return append(out, e.own.Settings.problems(settings, on, known)...)
}

// problems are the user's settings' problems: known, when not nil, is the
// installed server's list of settings, which every name must be on.
func (sn SettingNames) problems(settings map[string]string, on engine.Confinement, known *Known) []error {
	var out []error
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		value := settings[name]
		if err := sn.checkText(name, value); err != nil {
			out = append(out, err)
			continue
		}
		base, class, classified := "", engine.SettingClass{}, false
		for _, b := range sn.bases(sn.norm(name)) {
			if c, ok := sn.Classes[b]; ok {
				base, class, classified = b, c, true
				break
			}
			if known != nil && known.Names[b] != "" {
				base = b
				break
			}
		}
		switch {
		case classified:
			if err := class.Problem(value, on); err != nil {
				out = append(out, fmt.Errorf("%s=%s: %w", name, value, err))
			}
		case known == nil:
			// Without the server's list, only what the classes know is judged.
		case base == "":
			all := make([]string, 0, len(known.Names))
			for _, n := range known.Names {
				all = append(all, n)
			}
			sort.Strings(all)
			out = append(out, fmt.Errorf("%s=%s: %s has no setting %q%s", name, value, known.Server, name, engine.Closest(name, all)))
		case known.Text[base]:
			out = append(out, fmt.Errorf("%s=%s: dbio has not reviewed what %s's setting %s names (a file, a program, a library?), so it does not pass it on: leave it out, or run your own server and use --dsn", name, value, known.Server, known.Names[base]))
		}
	}
	return out
}

// checkText refuses a name that is not one and a control character in
// either: the configuration file is written line by line.
func (sn SettingNames) checkText(name, value string) error {
	if err := controlchars.Check(name); err != nil {
		return fmt.Errorf("%s setting %q: the name %w", sn.Engine, name, err)
	}
	if !sn.Valid.MatchString(name) {
		return fmt.Errorf("%s setting %q is not %s", sn.Engine, name, sn.NotAName)
	}
	if err := controlchars.Check(value); err != nil {
		return fmt.Errorf("%s setting %s=%q: the value %w: give it on one line, without control characters", sn.Engine, name, value, err)
	}
	return nil
}

// CheckWritten refuses, as the last step before a configuration file is
// written, a setting whose name or value holds a control character: a
// line break there would start a line of its own in the file. Every
// setting is checked, dbio's own too (their values hold the targets' paths).
func CheckWritten(settings []Setting) error {
	for _, s := range settings {
		for _, text := range []string{s.Name, s.Value, s.Why} {
			if err := controlchars.Check(text); err != nil {
				return fmt.Errorf("setting %s = %q is not written into the configuration file: it %w", s.Name, s.Value, err)
			}
		}
	}
	return nil
}

// Apply applies the user's settings over base, dbio's choices: a user
// setting replaces dbio's of the same name, others follow in name order.
// Whatever a preflight found, it refuses again a setting the engine's
// classes refuse on an instance confined to on.
func (sn SettingNames) Apply(base []Setting, user map[string]string, on engine.Confinement) ([]Setting, error) {
	if ps := sn.problems(user, on, nil); len(ps) > 0 {
		return nil, ps[0]
	}
	names := make([]string, 0, len(user))
	for n := range user {
		names = append(names, n)
	}
	sort.Strings(names)
	out := append([]Setting(nil), base...)
	for _, n := range names {
		v := user[n]
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

// ConfinementOf is where an instance placed on p may keep files: dbio's
// directory on its data target and on its log target.
func ConfinementOf(p engine.Placement) engine.Confinement {
	c := engine.Confinement{}
	if p.Data != nil {
		c.Data = p.Data.Path
	}
	if l := p.LogTarget(); l != nil && l != p.Data {
		c.Log = l.Path
	}
	return c
}

// SameDataDir refuses a server whose data directory, as the running
// server reports it, is not the one dbio placed it in (links followed on
// both sides): a run must measure, and record, the directory on its
// target, and never work on another server's files.
func SameDataDir(reported, placed string) error {
	if engine.ResolvePath(filepath.Clean(reported)) == engine.ResolvePath(filepath.Clean(placed)) {
		return nil
	}
	return fmt.Errorf("the server reports its data directory as %s, not %s where dbio placed it: it was stopped, and the run refused; a setting moved it (dbio places the data directory itself: use --target)", reported, placed)
}
