package suite

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestExpandCrossesVariants(t *testing.T) {
	p, err := Load("testdata/good.toml", testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 2+4 {
		t.Fatalf("%d runs, want 6", len(p.Runs))
	}
	var names []string
	for _, r := range p.Runs {
		names = append(names, r.Name)
	}
	want := []string{"corners-nvme", "corners-sata", "memory-nvme-8MB", "memory-nvme-256MB", "memory-sata-8MB", "memory-sata-256MB"}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("run names %v, want %v", names, want)
		}
	}
	r := p.Runs[2]
	if r.BufferPool != 8<<20 || r.Data.Limits.ReadIOPS == 0 || r.Step != 20*time.Second || r.Engine != "sqlite" {
		t.Errorf("run %+v", r)
	}
	var out bytes.Buffer
	// A database run's measurements may end early: typically 40 s of
	// its minute; a disk run's points run their whole time.
	est := func(r Run) Estimated {
		if r.Kind == "disk" {
			return Estimated{Typical: time.Minute, Ceiling: time.Minute, Space: 100 << 20}
		}
		return Estimated{Typical: 40 * time.Second, Ceiling: time.Minute, Space: 100 << 20}
	}
	if err := p.DryRun(&out, est); err != nil {
		t.Fatal(err)
	}
	golden(t, "good.dryrun", out.Bytes())
}

func TestValidationPointsAtLines(t *testing.T) {
	_, err := Load("testdata/bad.toml", testEnv(nil))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not a list of problems", err)
	}
	golden(t, "bad.problems", []byte(ps.Error()+"\n"))
}

func TestDecodeErrorsPointAtLines(t *testing.T) {
	tests := map[string]string{
		"unknown key": "name = \"x\"\n[targets.a]\npath = \"/x\"\nspeed = 3\n",
		"bad syntax":  "name = \"x\"\n[targets.a\n",
		"wrong type":  "name = \"x\"\n[workloads.w]\nkind = \"tpcc\"\nwarehouses = \"many\"\n",
	}
	for name, text := range tests {
		_, err := Parse("s.toml", []byte(text), testEnv(nil))
		var ps *Problems
		if !errors.As(err, &ps) || ps.Items[0].Line == 0 {
			t.Errorf("%s: %v, want a located problem", name, err)
		}
	}
}

func TestEngineDSNSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pg.dsn")
	if err := os.WriteFile(file, []byte("postgres://u:FromFile@h/db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.dsn")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PG_DSN": "postgres://u:FromEnv@h/db"}
	getenv := func(k string) string { return env[k] }
	suite := func(engine string) string {
		return "name = \"s\"\n[targets.t]\npath = \"/x\"\n[engines.pg]\nengine = \"postgres\"\n" + engine +
			"[workloads.w]\nkind = \"tpcc\"\nwarehouses = 1\n[[runs]]\nworkload = \"w\"\nengine = \"pg\"\ndata = \"t\"\n"
	}
	tests := []struct {
		name, engine string
		wantDSN      string // the run's DSN, when valid
		wantProblem  string // else the problem, with its line
	}{
		{"dsn", "dsn = \"postgres://u:Inline@h/db\"\n", "postgres://u:Inline@h/db", ""},
		{"dsn_env", "dsn_env = \"PG_DSN\"\n", "postgres://u:FromEnv@h/db", ""},
		{"dsn_file", "dsn_file = \"" + file + "\"\n", "postgres://u:FromFile@h/db", ""},
		{"unset variable", "dsn_env = \"NOPE\"\n", "", "line 6: engines.pg.dsn_env: the environment variable NOPE is not set or empty"},
		{"missing file", "dsn_file = \"" + filepath.Join(dir, "nope") + "\"\n", "", "line 6: engines.pg.dsn_file: open " + filepath.Join(dir, "nope") + ": no such file"},
		{"empty file", "dsn_file = \"" + empty + "\"\n", "", "line 6: engines.pg.dsn_file: " + empty + " is empty"},
		{"two sources", "dsn = \"postgres://h/db\"\ndsn_file = \"" + file + "\"\n", "", "line 7: engines.pg.dsn_file: give the DSN one way"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("s.toml", []byte(suite(tt.engine)), testEnv(getenv))
			if tt.wantProblem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantProblem) {
					t.Fatalf("error %v, want %q", err, tt.wantProblem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Runs[0].DSN.Reveal(); got != tt.wantDSN {
				t.Errorf("DSN %q, want %q", got, tt.wantDSN)
			}
			b, _ := json.Marshal(p)
			for _, pw := range []string{"Inline", "FromEnv", "FromFile"} {
				if strings.Contains(string(b), pw) || strings.Contains(fmt.Sprint(p.Runs[0]), pw) {
					t.Errorf("the plan shows the password %s: %s", pw, b)
				}
			}
		})
	}
}

// TestEngineFromDSN: an engine table with a dsn and no engine takes the
// engine the DSN is written for, as --dsn without -e does; a DSN that
// does not say is refused naming both ways to fix it.
func TestEngineFromDSN(t *testing.T) {
	env := testEnv(nil)
	env.EngineForDSN = func(dsn string) string { // the registry's answer for these forms
		switch {
		case strings.HasPrefix(dsn, "postgres://"):
			return "postgres"
		case strings.HasPrefix(dsn, "mysql://"):
			return "mariadb"
		}
		return ""
	}
	for _, tt := range []struct {
		name, table string
		want        string // the run's engine, when valid
		wantProblem string // else the problem
	}{
		{"postgres scheme", "dsn = \"postgres://u@h:5432/db\"\n", "postgres", ""},
		{"mysql scheme", "dsn = \"mysql://u@h:3306/\"\n", "mariadb", ""},
		{"engine given", "engine = \"postgres\"\ndsn = \"mysql://u@h:3306/\"\n", "postgres", ""},
		{"unknown form", "dsn = \"somewhere\"\n", "", "engines.pg.engine: the dsn does not say which engine it is for: give engine = \"postgres\" or \"mariadb\""},
		{"no dsn, no engine", "buffer_pool = \"64MB\"\n", "", "engines.pg.engine: unknown engine \"\""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := "name = \"s\"\n[targets.t]\npath = \"/x\"\n[engines.pg]\n" + tt.table +
				"[workloads.w]\nkind = \"tpcc\"\nwarehouses = 1\n[[runs]]\nworkload = \"w\"\nengine = \"pg\"\ndata = \"t\"\n"
			p, err := Parse("s.toml", []byte(text), env)
			if tt.wantProblem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantProblem) {
					t.Fatalf("error %v, want %q", err, tt.wantProblem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Runs[0].Engine; got != tt.want {
				t.Errorf("engine %q, want %q", got, tt.want)
			}
		})
	}
}

// A suite's problems come out all at once, in the file's words: unknown
// keys with the key probably meant, and what a key of the wrong type
// expects, never the decoder's Go types.
func TestProblemsInTheUsersWords(t *testing.T) {
	text := `name = "x"
[targets.a]
path = "/tmp/x"
limt = "sata-ssd"
[workloads.w]
kind = "tpcc"
warehouses = "many"
usres = [1, 2]
[[runs]]
name = "r"
workload = "w"
data = "a"
`
	_, err := Parse("s.toml", []byte(text), testEnv(nil))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not a list of problems", err)
	}
	got := ps.Error()
	for _, want := range []string{
		"line 4: targets.a.limt: unknown key (did you mean limit?)",
		"line 7: workloads.w.warehouses: expected a whole number, such as 4, got a string",
		"line 8: workloads.w.usres: unknown key (did you mean users?)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not say %q:\n%s", want, got)
		}
	}
	for _, internal := range []string{": toml:", "struct field", "suite.File", "[]int"} {
		if strings.Contains(got, internal) {
			t.Errorf("problems speak Go (%q):\n%s", internal, got)
		}
	}
}

// TestOldTimingKeysStillRead: rampup and step, the old names of ramp_time
// and runtime, set the same timings with a notice naming the new key; both
// names in one table are a located problem.
func TestOldTimingKeysStillRead(t *testing.T) {
	table := func(keys string) string {
		return "name = \"t\"\n[targets.d]\npath = \"/tmp/x\"\n[engines.lite]\nengine = \"sqlite\"\n" +
			"[workloads.w]\nkind = \"tpcc\"\n" + keys + "\n[[runs]]\nworkload = \"w\"\nengine = \"lite\"\ndata = \"d\"\n"
	}
	newer, err := Parse("new.toml", []byte(table("ramp_time = \"7s\"\nruntime = \"9s\"")), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	older, err := Parse("old.toml", []byte(table("rampup = \"7s\"\nstep = \"9s\"")), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Plan{newer, older} {
		if r := p.Runs[0]; r.RampUp != 7*time.Second || r.Step != 9*time.Second {
			t.Errorf("ramp-up %s, step %s; want 7s and 9s", r.RampUp, r.Step)
		}
	}
	if len(newer.Notices) != 0 {
		t.Errorf("notices for new keys: %q", newer.Notices)
	}
	got := strings.Join(older.Notices, "\n")
	for _, want := range []string{"old.toml: line 8: workloads.w.rampup is now ramp_time", "line 9: workloads.w.step is now runtime"} {
		if !strings.Contains(got, want) {
			t.Errorf("notices %q lack %q", got, want)
		}
	}
	_, err = Parse("both.toml", []byte(table("ramp_time = \"7s\"\nrampup = \"8s\"")), testEnv(nil))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("both names: %v, want problems", err)
	}
	for _, want := range []string{"line 9: workloads.w.rampup: rampup is the old name of ramp_time, which is given too"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems %q lack %q", err, want)
		}
	}
}

func TestExpectationsPointAtLines(t *testing.T) {
	_, err := Load("testdata/expect-bad.toml", testEnv(nil))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not a list of problems", err)
	}
	golden(t, "expect-bad.problems", []byte(ps.Error()+"\n"))
	// A misspelt key of an [[expect]] is named with the key meant.
	_, err = Parse("s.toml", []byte("name = \"x\"\n[[expect]]\nfigure = \"tpm\"\nrelaton = \"lower\"\n"), testEnv(nil))
	if err == nil || err.Error() != "s.toml: line 4: expect.relaton: unknown key (did you mean relation?)" {
		t.Errorf("misspelt key: %v", err)
	}
}

// Repetitions share their run's base name, which expectations name, and a
// second entry that expands to the same name is numbered before its
// repetitions are.
func TestRepeatsShareTheirBaseName(t *testing.T) {
	text := "name = \"r\"\n[targets.a]\npath = \"/a\"\n[targets.b]\npath = \"/b\"\n[workloads.w]\nkind = \"tpcc\"\nwarehouses = 1\n" +
		"[[runs]]\nname = \"x\"\nworkload = \"w\"\nengine = \"e\"\ndata = [\"a\", \"b\"]\nrepeat = 2\n" +
		"[[runs]]\nname = \"x\"\nworkload = \"w\"\nengine = \"e\"\ndata = [\"a\", \"b\"]\n" +
		"[engines.e]\nengine = \"sqlite\"\n"
	p, err := Parse("s.toml", []byte(text), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range p.Runs {
		got = append(got, r.Name+"/"+r.Base)
	}
	want := "x-a-r1/x-a x-b-r1/x-b x-a-r2/x-a x-b-r2/x-b x-a-2/x-a-2 x-b-2/x-b-2"
	if strings.Join(got, " ") != want {
		t.Errorf("runs %v, want %s", got, want)
	}
}
