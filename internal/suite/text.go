package suite

import (
	"fmt"
	"strconv"

	"dbio/internal/controlchars"
	"dbio/internal/fleet"
	"dbio/internal/secret"
)

// checkText refuses every value of the file that would reach a
// configuration file, an fio job file or the terminal with a control
// character in it: the suite's name and results directory, the targets'
// names and paths (on this machine or on hosts), the engines' names,
// settings and DSNs, the workloads' and runs' names. A TOML string may
// hold a line break ("A\ndatadir=B"), which my.cnf would read as a line
// of its own. The value is shown quoted, its control characters escaped.
func (v *validator) checkText() {
	f := v.f
	check := func(table, key, value string) {
		if err := controlchars.Check(value); err != nil {
			v.addf(table, key, "%q %v: write it without control characters", value, err)
		}
	}
	check("", "name", f.Name)
	check("", "results", f.Results)
	for _, name := range sortedKeys(f.Targets) {
		t := f.Targets[name]
		table := "targets." + name
		check("targets", name, name)
		for key, paths := range map[string][]string{"path": {t.Path}, "paths": t.Paths} {
			for _, p := range paths {
				if _, err := fleet.ParseTarget(p); err == nil {
					// A target on a host is refused where it is resolved.
					check(table, key, p)
				}
			}
		}
	}
	for _, name := range sortedKeys(f.Engines) {
		e := f.Engines[name]
		table := "engines." + name
		check("engines", name, name)
		for _, k := range sortedKeys(e.Settings) {
			check(table+".settings", k, k+" = "+e.Settings[k])
		}
		if err := controlchars.Check(e.DSN); err != nil {
			v.addf(table, "dsn", "%q %v: write it without control characters", secret.RedactDSN(e.DSN), err)
		}
	}
	for _, name := range sortedKeys(f.Workloads) {
		check("workloads", name, name)
	}
	for i, r := range f.Runs {
		check(fmt.Sprintf("runs[%d]", i), "name", r.Name)
	}
}

// shownKey is a key as a problem shows it: quoted, its control characters
// escaped, when it holds one (a quoted TOML key may).
func shownKey(key string) string {
	if _, _, ok := controlchars.Find(key); ok {
		return strconv.Quote(key)
	}
	return key
}
