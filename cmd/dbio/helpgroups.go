package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A workload command has some fifty flags; its help lists them by what a
// user is deciding (where and how long, the workload's size, the engine,
// open loop, paced terminals, hosts) instead of alphabetically.

// flagGroupKey is the annotation naming the help group of a flag that
// flagGroups does not list: a workload's own settings.
const flagGroupKey = "dbio/help-group"

// workloadGroup is the group of a workload's own settings.
const workloadGroup = "workload"

// flagGroups are the help's groups in order, each with its flags in order;
// a flag in none of them is in its annotated group, else under "Other
// flags".
var flagGroups = []struct {
	title string
	flags []string
}{
	{"Basic", []string{"engine", "target", "users", "ramp-time", "runtime", "dry-run", "repeat", "results", "name", "create-target", "skip-checks", "help"}},
	{workloadGroup, nil},
	{"Engine and storage", []string{"buffer-pool", "server-memory", "setting", "log-target", "preallocate", "limit", "transport", "dsn", "dsn-file", "database", "drop-after"}},
	{"Ramp-up until steady", []string{"ramp-until", "steady-window", "steady-ramp"}},
	{"Open loop", []string{"rate", "rate-per-user", "arrival", "late-tolerance", "goal", "goal-max", "goal-resolution", "goal-probes", "goal-confirm"}},
	{"Paced terminals (TPC-C keying and thinking)", []string{"keying-thinking", "terminals", "pool", "terminals-over-spec"}},
	{"Hosts", []string{"host", "ssh-config", "driver", "node-exporter", startBarrierFlag}},
}

// The template function is cobra's, for every command: registered once,
// before any command is built (commands are built concurrently in tests).
func init() { cobra.AddTemplateFunc("groupedFlagUsages", groupedFlagUsages) }

// groupFlagsInHelp makes cmd's help list its flags by flagGroups; the
// workload's own settings are titled by workloadTitle.
func groupFlagsInHelp(cmd *cobra.Command, workloadTitle string) {
	const plain = "Flags:\n{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}"
	tmpl := cmd.UsageTemplate()
	if !strings.Contains(tmpl, plain) {
		return // cobra changed its template: the plain list stays
	}
	cmd.SetUsageTemplate(strings.Replace(tmpl, plain, `{{groupedFlagUsages .LocalFlags "`+workloadTitle+`"}}`, 1))
}

// groupedFlagUsages is the flags of fs, one titled list per group, the
// visible ones only.
func groupedFlagUsages(fs *pflag.FlagSet, workloadTitle string) string {
	groups := map[string]*pflag.FlagSet{}
	place := map[string]string{}
	for _, g := range flagGroups {
		for _, n := range g.flags {
			place[n] = g.title
		}
	}
	order := map[string]int{}
	for _, g := range flagGroups {
		for i, n := range g.flags {
			order[n] = i
		}
	}
	var flags []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			flags = append(flags, f)
		}
	})
	// A group's listed flags in its order, the others alphabetically
	// (VisitAll's order) after them.
	slices.SortStableFunc(flags, func(a, b *pflag.Flag) int {
		rank := func(f *pflag.Flag) int {
			if i, ok := order[f.Name]; ok {
				return i
			}
			return len(order)
		}
		return rank(a) - rank(b)
	})
	for _, f := range flags {
		title := place[f.Name]
		if title == "" {
			title = "Other flags"
			if g := f.Annotations[flagGroupKey]; len(g) > 0 {
				title = g[0]
			}
		}
		if groups[title] == nil {
			groups[title] = pflag.NewFlagSet(title, pflag.ContinueOnError)
			groups[title].SortFlags = false
		}
		groups[title].AddFlag(f)
	}
	var b strings.Builder
	titles := make([]string, 0, len(flagGroups)+1)
	for _, g := range flagGroups {
		titles = append(titles, g.title)
	}
	for _, title := range append(titles, "Other flags") {
		g := groups[title]
		if g == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		shown := title
		if title == workloadGroup {
			shown = workloadTitle
		}
		b.WriteString(shown + ":\n")
		b.WriteString(strings.TrimRight(g.FlagUsages(), " \n"))
	}
	return b.String()
}

// markGroup annotates the flags fs gained since before with the group.
func markGroup(fs *pflag.FlagSet, before map[string]bool, group string) {
	fs.VisitAll(func(f *pflag.Flag) {
		if before[f.Name] {
			return
		}
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[flagGroupKey] = []string{group}
	})
}

// flagNames are the names of fs's flags.
func flagNames(fs *pflag.FlagSet) map[string]bool {
	names := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	return names
}
