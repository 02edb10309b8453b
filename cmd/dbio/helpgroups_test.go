package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"dbio/internal/engine/engines"
)

// TestWorkloadHelpIsGrouped: a workload command's help (and that of every
// other command with many flags) lists every visible flag once, under the
// group of what it decides, the groups in order and none left over.
func TestWorkloadHelpIsGrouped(t *testing.T) {
	for _, tt := range []struct {
		command string
		groups  []string
	}{
		{"tpcc", []string{"Basic:", "TPC-C settings:", "Engine and storage:", "Ramp-up until steady:", "Open loop:", "Paced terminals (TPC-C keying and thinking):", "Hosts:", "Global Flags:"}},
		{"sysbench", []string{"Basic:", "Engine and storage:", "Open loop:", "Hosts:"}},
		{"as3ap", []string{"Basic:", "Engine and storage:", "Open loop:", "Hosts:"}},
		{"quick", []string{"Basic:", "TPC-C settings:", "Engine and storage:", "Open loop:"}},
		{"backup", []string{"Basic:", "TPC-C settings:", "Backup cycles:", "Engine and storage:"}},
		{"noisy", []string{"Basic:", "TPC-C settings:", "Tenants and backups:", "Engine and storage:", "Hosts:"}},
		{"disk", []string{"Basic:", "fio points:", "Steady state:", "Hosts:"}},
		{"ab", []string{"Basic:", "Sides A and B:"}},
		{"capture", []string{"Basic:", "Capture:"}},
		{"replay", []string{"Basic:", "Replay:"}},
		{"suite", []string{"Basic:"}},
	} {
		t.Run(tt.command, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), testApp(&out), []string{tt.command, "--help"}); code != exitOK {
				t.Fatalf("exit %d:\n%s", code, out.String())
			}
			help := out.String()
			at := 0
			for _, g := range tt.groups {
				i := strings.Index(help[at:], "\n"+g+"\n")
				if i < 0 {
					t.Fatalf("help lacks the group %q after byte %d:\n%s", g, at, help)
				}
				at += i + 1
			}
			if i := strings.Index(help, "\nOther flags:\n"); i >= 0 {
				t.Errorf("a flag is in no group: add it to flagGroups in helpgroups.go:\n%s", help[i:])
			}
		})
	}
}

// TestEveryFlagIsInAHelpGroup: every command with more than a handful of
// flags lists them in groups, and every grouped command's help lists each
// of its visible flags once, none under "Other flags".
func TestEveryFlagIsInAHelpGroup(t *testing.T) {
	app := testApp(&bytes.Buffer{})
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	root := newRoot(app)
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, c := range cmd.Commands() {
			walk(c)
		}
		visible := 0
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Name != "help" {
				visible++
			}
		})
		if cmd.Annotations[groupedHelpKey] == "" {
			if visible > 5 {
				t.Errorf("%s has %d flags listed alphabetically: call groupFlagsInHelp", cmd.CommandPath(), visible)
			}
			return
		}
		var out bytes.Buffer
		cmd.SetOut(&out)
		if err := cmd.Usage(); err != nil {
			t.Fatal(err)
		}
		help := out.String()
		if i := strings.Index(help, "\nOther flags:\n"); i >= 0 {
			t.Errorf("%s: a flag is in no group: add it to flagGroups in helpgroups.go or name it in the command's groupOwnFlags:\n%s", cmd.CommandPath(), help[i:])
		}
		seen := map[string]int{}
		for _, m := range regexp.MustCompile(`(?m)^  (?:-\w, )?    --([a-z0-9-]+)|^  -\w, --([a-z0-9-]+)`).FindAllStringSubmatch(help, -1) {
			seen[m[1]+m[2]]++
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if n := seen[f.Name]; !f.Hidden && n != 1 {
				t.Errorf("%s: --%s is listed %d times", cmd.CommandPath(), f.Name, n)
			}
		})
	}
	walk(root)
}
