package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"dbio/internal/registry"
)

// A DBA arrives with another tool's words and makes typos; a flag dbio does
// not know, or a value it cannot read, gets an answer that says what to
// type instead (exit code 2), never a parser's message.

// synonymOf is the annotation that marks a flag as another tool's name for
// a dbio flag: it sets the same value, silently, for good.
const synonymOf = "dbio/synonym-of"

// toolSynonyms are other tools' words for dbio's flags where the meaning is
// the same: HammerDB's virtual users are dbio's users (one count is a
// sequence of one step), its warehouse count and keying-and-thinking
// switch are TPC-C's.
var toolSynonyms = []struct{ name, to, tool string }{
	{"vu", "users", "HammerDB"},
	{"warehouse", "warehouses", "HammerDB"},
	{"count-ware", "warehouses", "HammerDB"},
	{"keyandthink", "keying-thinking", "HammerDB"},
}

// foreignWords are other tools' words whose meaning differs from the dbio
// flag closest to them: taken as synonyms they would run something else
// than the user meant, so the answer names the flag and the difference.
var foreignWords = map[string]struct{ flag, hint string }{
	"duration":    {"runtime", "--runtime is the measured time of each step (each user count), with a unit, e.g. --runtime 5m; HammerDB's duration is the whole timed test, in minutes"},
	"time":        {"runtime", "--runtime is the measured time of each step, warm-up excluded, e.g. --runtime 2m; sysbench's --time is the whole run, warm-up included"},
	"warmup-time": {"ramp-time", "--ramp-time is the warm-up before each step, e.g. --ramp-time 30s (sysbench's --warmup-time is one warm-up for the whole run)"},
	"threads":     {"users", "--users is the sequence of user counts, one measured step per count, e.g. --users 8 or --users 1,2,4,8 (sysbench's --threads is one count)"},
}

// addSynonyms registers, on every command with the dbio flag, the other
// tools' names for it (toolSynonyms), hidden, and names them in the flag's
// help.
func addSynonyms(c *cobra.Command) {
	fs := c.Flags()
	named, tool := map[string][]string{}, map[string]string{}
	for _, s := range toolSynonyms {
		to := fs.Lookup(s.to)
		if to == nil || fs.Lookup(s.name) != nil {
			continue
		}
		f := fs.VarPF(to.Value, s.name, "", s.tool+"'s name for --"+s.to)
		f.NoOptDefVal = to.NoOptDefVal
		f.Hidden = true
		f.Annotations = map[string][]string{synonymOf: {s.to}}
		named[s.to] = append(named[s.to], "--"+s.name)
		tool[s.to] = s.tool
	}
	for to, names := range named {
		fs.Lookup(to).Usage += fmt.Sprintf(" (%s: %s)", tool[to], strings.Join(names, ", "))
	}
	for _, sub := range c.Commands() {
		addSynonyms(sub)
	}
}

// flagError turns pflag's parse errors into plain words with an example:
// an unknown flag with the flags it may have meant, a value that is not of
// the flag's kind with one that is.
func flagError(c *cobra.Command, err error) error {
	see := fmt.Sprintf(" (see '%s --help')", c.CommandPath())
	var notExist *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	var required *pflag.ValueRequiredError
	switch {
	case errors.As(err, &notExist) && notExist.GetSpecifiedName() != "":
		return usagef("%s%s", unknownFlag(c, notExist.GetSpecifiedName()), see)
	case errors.As(err, &invalid):
		return usagef("%s%s", invalidValue(invalid.GetFlag(), invalid.GetValue(), invalid.Unwrap()), see)
	case errors.As(err, &required) && required.GetSpecifiedName() != "":
		f := required.GetFlag()
		return usagef("--%s needs a value, e.g. --%s %s%s", f.Name, f.Name, valueExample(f), see)
	}
	return usagef("%v%s", err, see)
}

// unknownFlag says what a flag dbio does not know may have been: another
// tool's word for a dbio flag, a flag of this command spelt close to it,
// or a flag of another command.
func unknownFlag(c *cobra.Command, name string) string {
	msg := "unknown flag --" + name
	if w, ok := foreignWords[normalFlagName(name)]; ok && c.Flags().Lookup(w.flag) != nil {
		return msg + ": " + w.hint
	}
	if s := suggestFlags(c.Flags(), name); len(s) > 0 {
		return msg + ": did you mean " + orList(s) + "?"
	}
	if others := commandsWithFlag(c.Root(), name); len(others) > 0 {
		return fmt.Sprintf("%s: --%s is a flag of %s, not of %s", msg, name, orList(others), c.CommandPath())
	}
	return msg
}

// suggestFlags are the flags of fs spelt closest to name, by their names
// and the names that stand for them (old names, other tools' words), each
// given by its current name; at most three, closest first.
func suggestFlags(fs *pflag.FlagSet, name string) []string {
	typed := normalFlagName(name)
	best := map[string]int{}
	fs.VisitAll(func(f *pflag.Flag) {
		current := f.Name
		if to, ok := f.Annotations[aliasOf]; ok {
			current = to[0]
		} else if to, ok := f.Annotations[synonymOf]; ok {
			current = to[0]
		} else if f.Hidden {
			return
		}
		candidate := normalFlagName(f.Name)
		d := registry.EditDistance(typed, candidate)
		close := d <= max(1, len(typed)/3)
		if !close && len(typed) >= 3 && (strings.HasPrefix(candidate, typed) || strings.HasPrefix(typed, candidate)) {
			// A flag begun or run on: --ware, --runtime-s.
			close, d = true, max(d, 1)
		}
		if prev, seen := best[current]; close && (!seen || d < prev) {
			best[current] = d
		}
	})
	names := make([]string, 0, len(best))
	for n := range best {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if best[a] != best[b] {
			return best[a] - best[b]
		}
		return strings.Compare(a, b)
	})
	if len(names) > 3 {
		names = names[:3]
	}
	for i, n := range names {
		names[i] = "--" + n
	}
	return names
}

// commandsWithFlag are the commands of root that have a visible flag of
// that name.
func commandsWithFlag(root *cobra.Command, name string) []string {
	var out []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup(name); f != nil && !f.Hidden && c != root {
			out = append(out, c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// normalFlagName folds what does not tell flags apart: case and
// underscores for dashes (a suite file's keys use underscores).
func normalFlagName(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "_", "-")
}

func orList(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// invalidValue says what the flag takes, with an example, for a value its
// parser refused.
func invalidValue(f *pflag.Flag, value string, cause error) string {
	given := fmt.Sprintf("--%s %s", f.Name, value)
	number := func(whole bool) string {
		kind, example := "number", "100 or 2.5"
		if whole {
			kind, example = "whole number", "4"
		}
		if first := strings.Fields(strings.ReplaceAll(value, ",", " ")); len(first) > 1 {
			return fmt.Sprintf("%s: give one %s, e.g. --%s %s (one value, not a list)", given, kind, f.Name, first[0])
		}
		return fmt.Sprintf("%s: give a %s, e.g. %s", given, kind, example)
	}
	switch f.Value.Type() {
	case "duration":
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			return fmt.Sprintf("%s: give a unit, e.g. %ss or 2m", given, value)
		}
		return fmt.Sprintf("%s: give a duration with its unit, e.g. 30s, 2m or 1h30m", given)
	case "float64", "float32":
		return number(false)
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return number(true)
	case "bool":
		return fmt.Sprintf("--%s=%s: give true or false, or --%s alone for true", f.Name, value, f.Name)
	}
	return fmt.Sprintf("%s: %v", given, cause)
}

// valueExample is a value of f's kind to show: its default when it has one.
func valueExample(f *pflag.Flag) string {
	switch d := f.DefValue; {
	case d != "" && d != "0" && d != "0s" && d != "[]" && d != "false":
		return d
	}
	switch f.Value.Type() {
	case "duration":
		return "2m"
	case "int", "uint", "int64", "uint64":
		return "4"
	case "float64":
		return "100"
	}
	return "VALUE"
}
