package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A workload command has some fifty flags; its help lists them by what a
// user is deciding (where and how long, the workload's size, the engine,
// open loop, paced terminals, hosts) instead of alphabetically. Every
// command with more than a handful of flags does the same, its own
// settings (disk's fio points, ab's sides, backup's cycles) in groups
// named by groupOwnFlags.

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
	{"Basic", []string{"engine", "target", "users", "ramp-time", "runtime", "disk-runtime", "dry-run", "repeat", "results", "name", "create-target", "skip-checks", "help"}},
	{workloadGroup, nil},
	{"Engine and storage", []string{"buffer-pool", "server-memory", "setting", "log-target", "preallocate", "limit", "transport", "dsn", "dsn-file", "database", "drop-after", "capture"}},
	{"Ramp-up until steady", []string{"ramp-until", "steady-window", "steady-ramp"}},
	{"Measurement until precise", []string{"precision", "precision-min"}},
	{"Open loop", []string{"rate", "rate-per-user", "arrival", "late-tolerance", "goal", "goal-max", "goal-resolution", "goal-probes", "goal-confirm"}},
	{"Paced terminals (TPC-C keying and thinking)", []string{"keying-thinking", "terminals", "pool", "terminals-over-spec"}},
	{"Hosts", []string{"host", "ssh-config", "driver", "node-exporter", "node-exporter-port", "fio-server", "fio-port", startBarrierFlag}},
	{"CI gates and history", []string{"threshold", "junit", "label", "history"}},
}

// The template function is cobra's, for every command: registered once,
// before any command is built (commands are built concurrently in tests).
func init() { cobra.AddTemplateFunc("groupedFlagUsages", groupedFlagUsages) }

// groupedHelpKey marks a command whose help lists its flags in groups, so
// that a test can ask every such command for a group of every flag.
const groupedHelpKey = "dbio/grouped-help"

// groupFlagsInHelp makes cmd's help list its flags by flagGroups; the
// workload's own settings are titled by workloadTitle.
func groupFlagsInHelp(cmd *cobra.Command, workloadTitle string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[groupedHelpKey] = "yes"
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
	// A command's own groups (annotated titles not in flagGroups) follow
	// the workload's, in the order of their first flag.
	var own []string
	for _, f := range flags {
		if g := f.Annotations[flagGroupKey]; len(g) > 0 && place[f.Name] == "" && !listed(g[0]) && !slices.Contains(own, g[0]) {
			own = append(own, g[0])
		}
	}
	titles := make([]string, 0, len(flagGroups)+len(own)+1)
	for _, g := range flagGroups {
		titles = append(titles, g.title)
		if g.title == workloadGroup {
			titles = append(titles, own...)
		}
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

// listed says whether title is one of flagGroups'.
func listed(title string) bool {
	for _, g := range flagGroups {
		if g.title == title {
			return true
		}
	}
	return false
}

// groupOwnFlags puts cmd's flags of the given names in its help's group
// title, a setting of the command's own. A name that is not a flag of cmd
// is a mistake in the command's code, which TestEveryFlagIsInAHelpGroup
// finds.
func groupOwnFlags(cmd *cobra.Command, title string, names ...string) {
	for _, n := range names {
		f := cmd.Flags().Lookup(n)
		if f == nil {
			panic("groupOwnFlags: " + cmd.Name() + " has no flag --" + n)
		}
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[flagGroupKey] = []string{title}
	}
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
