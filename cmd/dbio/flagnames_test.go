package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"dbio/internal/engine/engines"
	"dbio/internal/execx"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/target"
)

// TestOldFlagNamesStillWork: a renamed flag's old name sets the new one,
// with a one-line notice on stderr; both names at once are refused.
func TestOldFlagNamesStillWork(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string // in stdout
		notices []string
	}{
		{"disk --ramp", []string{"disk", "--target", dir, "--dry-run", "--ramp", "2s"}, exitOK, "after 2s warm-up", []string{"--ramp is now --ramp-time"}},
		{"disk --engine", []string{"disk", "--target", dir, "--dry-run", "--engine", "psync"}, exitOK, "4k-randread", []string{"--engine is now --ioengine"}},
		{"disk --engine with a database", []string{"disk", "--target", dir, "--dry-run", "--engine", "postgres"}, exitUsage, "", []string{"--engine is now --ioengine", "postgres is a database engine"}},
		{"tpcc --rampup --step", []string{"tpcc", "--target", dir, "--rampup", "-1s", "--step", "0s"}, exitUsage, "",
			[]string{"--rampup is now --ramp-time", "--step is now --runtime", "--ramp-time -1s", "--runtime 0s"}},
		{"both names", []string{"tpcc", "--target", dir, "--step", "5s", "--runtime", "5s"}, exitUsage, "", []string{"--runtime and --step are one flag"}},
		{"ab --runs", []string{"ab", "--runs", "0", "--a", "--buffer-pool 1GB", "--", "tpcc", "--target", dir}, exitUsage, "", []string{"--runs is now --repeat", "--repeat 0: run each side at least once"}},
		{"ab --runs and --repeat", []string{"ab", "--runs", "2", "--repeat", "2", "--a", "--buffer-pool 1GB", "--", "tpcc"}, exitUsage, "", []string{"--repeat and --runs are one flag"}},
		{"backup refuses --step", []string{"backup", "--target", dir, "--step", "5s"}, exitUsage, "", []string{"--runtime: does not apply to dbio backup"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			app := testApp(&stdout)
			app.Stderr = &stderr
			code := run(context.Background(), app, tt.args)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout.String())
			}
			for _, n := range tt.notices {
				if !strings.Contains(stderr.String(), n) {
					t.Errorf("stderr lacks %q:\n%s", n, stderr.String())
				}
			}
			if strings.Contains(stdout.String(), "is now --") {
				t.Errorf("a notice went to stdout:\n%s", stdout.String())
			}
		})
	}
}

// TestShortFlagsMeanOneThing: a short flag names the same long flag in
// every command that has it, and an old name is hidden from every help.
func TestShortFlagsMeanOneThing(t *testing.T) {
	app := &App{Exec: execx.Real{}, SysFS: target.HostFS()}
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	root := newRoot(app)
	long := map[string]string{}
	where := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if _, old := f.Annotations[aliasOf]; old && !f.Hidden {
				t.Errorf("%s: old name --%s shows in the help", c.CommandPath(), f.Name)
			}
			if f.Shorthand == "" {
				return
			}
			if prev, ok := long[f.Shorthand]; ok && prev != f.Name {
				t.Errorf("-%s is --%s in %s but --%s in %s", f.Shorthand, prev, where[f.Shorthand], f.Name, c.CommandPath())
			}
			long[f.Shorthand], where[f.Shorthand] = f.Name, c.CommandPath()
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for short, name := range map[string]string{"e": "engine", "t": "target", "u": "users", "p": "profile", "n": "dry-run"} {
		if long[short] != name {
			t.Errorf("-%s is --%q, want --%s", short, long[short], name)
		}
	}
}

// A report shows a run's configuration in the flags' words: every
// "--flag" its configuration names is a flag of the command that ran it,
// so that a reader can type it back.
func TestReportsNameRealFlags(t *testing.T) {
	app := &App{Exec: execx.Real{}, SysFS: target.HostFS()}
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	root := newRoot(app)
	named := regexp.MustCompile(`(?m)^- --([a-z][a-z0-9-]*)[ :]`)
	for _, run := range []string{"tpcc-postgres", "tpcc-goal-postgres", "tpcc-postgres-memory", "tpcc-postgres-dbtime-capped", "quick-limited", "disk-mix", "disk-curve", "disk-fleet-a", "repeats-slow/20261125-154207-slow-r1"} {
		t.Run(run, func(t *testing.T) {
			l, err := results.Load(filepath.Join("..", "..", "internal", "report", "testdata", run))
			if err != nil {
				t.Fatal(err)
			}
			cmd, _, err := root.Find([]string{l.Run.Kind})
			if err != nil || cmd == root {
				t.Fatalf("no command %s: %v", l.Run.Kind, err)
			}
			out := report.OutputAt(filepath.Join(t.TempDir(), "r.html"))
			md := out.Markdown
			if err := report.WriteReport(out, []*results.Loaded{l}, report.Options{Titles: workloads().Title, SettingFlag: workloads().Flag}); err != nil {
				t.Fatal(err)
			}
			text, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			_, config, _ := strings.Cut(string(text), "**Resolved configuration**")
			config, _, _ = strings.Cut(config, "\n**")
			flags := named.FindAllStringSubmatch(strings.ReplaceAll(config, `\`, ""), -1)
			if len(flags) < 3 {
				t.Fatalf("the configuration names %d flags:\n%s", len(flags), config)
			}
			for _, f := range flags {
				if cmd.Flags().Lookup(f[1]) == nil {
					t.Errorf("the report names --%s, which dbio %s does not have", f[1], l.Run.Kind)
				}
			}
		})
	}
}
