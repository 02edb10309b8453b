package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"dbio/internal/engine/engines"
)

// TestWorkloadHelpIsGrouped: a workload command's help lists every
// visible flag once, under the group of what it decides, the groups in
// order and none left over.
func TestWorkloadHelpIsGrouped(t *testing.T) {
	for _, tt := range []struct {
		command string
		groups  []string
	}{
		{"tpcc", []string{"Basic:", "TPC-C settings:", "Engine and storage:", "Ramp-up until steady:", "Open loop:", "Paced terminals (TPC-C keying and thinking):", "Hosts:", "Global Flags:"}},
		{"sysbench", []string{"Basic:", "Engine and storage:", "Open loop:", "Hosts:"}},
		{"as3ap", []string{"Basic:", "Engine and storage:", "Open loop:", "Hosts:"}},
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
			app := testApp(&bytes.Buffer{})
			app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
			cmd, _, err := newRoot(app).Find([]string{tt.command})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, m := range regexp.MustCompile(`(?m)^  (?:-\w, )?    --([a-z0-9-]+)|^  -\w, --([a-z0-9-]+)`).FindAllStringSubmatch(help, -1) {
				seen[m[1]+m[2]]++
			}
			for name, n := range seen {
				if n != 1 {
					t.Errorf("--%s is listed %d times", name, n)
				}
			}
			cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && seen[f.Name] == 0 {
					t.Errorf("--%s is missing from the help", f.Name)
				}
			})
		})
	}
}
