package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// dbio's flags follow one vocabulary (docs/flags.md): timing flags take
// fio's names (--runtime, --ramp-time), a flag means the same thing in every
// command that has it, and a renamed flag keeps its old name as a hidden
// alias for a while. The helpers below are the alias mechanism and the
// per-command help every command uses.

// aliasOf is the annotation that marks a flag as the old name of another.
const aliasOf = "dbio/alias-of"

// alias registers old as a hidden, deprecated name of the flag named to:
// it sets the same value, and using it prints a one-line notice (see
// resolveAliases). to must already be registered.
func alias(fs *pflag.FlagSet, old, to string) {
	f := fs.Lookup(to)
	if f == nil {
		panic("alias of unregistered flag --" + to)
	}
	a := fs.VarPF(f.Value, old, "", "old name of --"+to)
	a.NoOptDefVal = f.NoOptDefVal
	a.Hidden = true
	a.Annotations = map[string][]string{aliasOf: {to}}
}

// resolveAliases runs after parsing: for every old name given, it prints
// one notice to w and marks the new name as given, so that the command
// reads only new names; another tool's word (addSynonyms) is marked the
// same way, without a notice. Both names of one flag given at once are refused,
// since one would silently win.
func resolveAliases(fs *pflag.FlagSet, w io.Writer) error {
	var errs []error
	var notices []string
	fs.VisitAll(func(f *pflag.Flag) {
		to, old := f.Annotations[aliasOf]
		if !old {
			to = f.Annotations[synonymOf]
		}
		if len(to) == 0 || !f.Changed {
			return
		}
		target := fs.Lookup(to[0])
		if target.Changed {
			what := "its old name"
			if !old {
				what = strings.TrimSuffix(f.Usage, " for --"+to[0])
			}
			errs = append(errs, fmt.Errorf("--%s and --%s are one flag (--%s is %s): give it once", to[0], f.Name, f.Name, what))
			return
		}
		target.Changed = true
		if old {
			notices = append(notices, fmt.Sprintf("dbio: --%s is now --%s; the old name still works for now but will go\n", f.Name, to[0]))
		}
	})
	sort.Strings(notices)
	for _, n := range notices {
		fmt.Fprint(w, n)
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	return nil
}

// setUsage rewords a shared flag's help for one command (noisy's --users is
// one count, not a sequence).
func setUsage(fs *pflag.FlagSet, name, usage string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("setUsage of unregistered flag --" + name)
	}
	f.Usage = usage
}

// refuseFlags refuses the named flags when given: a command that inherits
// a shared flag it has no use for says so instead of ignoring it.
func refuseFlags(fs *pflag.FlagSet, why string, names ...string) error {
	var errs []error
	for _, n := range names {
		if f := fs.Lookup(n); f != nil && f.Changed {
			errs = append(errs, fmt.Errorf("--%s: %s", n, why))
		}
	}
	if len(errs) > 0 {
		return usageErrors(errs)
	}
	return nil
}
