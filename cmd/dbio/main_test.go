package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

func testApp(out *bytes.Buffer) *App {
	return &App{Stdout: out, Stderr: out, Getenv: func(string) string { return "" }, Now: time.Now, Exec: execx.Real{Proc: target.HostFS().Proc}, SysFS: target.HostFS(), Args: []string{"dbio"}}
}

func TestBadInputIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	// A suite whose host names an ssh_config that is not there: ssh would
	// find no configuration only once the run had begun.
	missingSSHConfig := filepath.Join(dir, "missing_ssh_config")
	badHostSuite := filepath.Join(dir, "hosts.toml")
	if err := os.WriteFile(badHostSuite, []byte(`name = "hosts"
results = "`+filepath.Join(dir, "suite-results")+`"

[[host]]
name = "h1"
destination = "h1"
ssh_config = "`+missingSSHConfig+`"

[targets.one]
path = "h1:/srv/data"

[workloads.corners]
kind = "disk"
profile = "four-corners"
size = "1G"

[[runs]]
name = "corners"
workload = "corners"
data = "one"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	wantSSHConfig := `line 7: host[0].ssh_config: "` + missingSSHConfig + `": no such file or directory`
	tests := []struct {
		args []string
		want string // in the one-line message
	}{
		{[]string{"tpcc", "--target", dir, "--warehouses", "0"}, "--warehouses 0"},
		{[]string{"tpcc", "--target", dir, "--users", "3,a"}, `--users: user count "a"`},
		{[]string{"tpcc", "--target", dir, "--runtime", "-5s"}, "--runtime -5s"},
		{[]string{"tpcc", "--target", dir, "--ramp-time", "-1m"}, "--ramp-time -1m0s"},
		{[]string{"tpcc", "--target", dir, "--engine", "oracle"}, `unknown engine "oracle"`},
		{[]string{"tpcc", "--target", dir, "--warehouses", "two"}, "--warehouses two: give a whole number"},
		{[]string{"tpcc", "--target", dir, "--buffer-pool", "lots"}, `--buffer-pool "lots"`},
		{[]string{"tpcc", "--target", dir, "--setting", "novalue"}, `--setting "novalue": use name=value`},
		{[]string{"tpcc"}, "--target: required"},
		{[]string{"tpcc", "--nope"}, "unknown flag --nope"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"ab", "--repeat", "2", "--a", "--buffer-pool 1GB", "--results", filepath.Join(dir, "ab"), "--", "tpcc", "--repeat", "3"}, "--repeat: dbio ab repeats each side itself"},
		{[]string{"ab", "--a", "--repeat=2", "--results", filepath.Join(dir, "ab"), "--", "tpcc"}, "--repeat: dbio ab repeats each side itself"},
		{[]string{"suite", "--dry-run", badHostSuite}, wantSSHConfig},
		{[]string{"suite", badHostSuite}, wantSSHConfig},
		{[]string{"sysbench", "--host", "h1=h1", "--ssh-config", missingSSHConfig, "--target", "h1:/srv/data", "--results", filepath.Join(dir, "workload")},
			`--ssh-config "` + missingSSHConfig + `": no such file or directory`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), tt.args)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d; output:\n%s", code, exitUsage, out.String())
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output %q does not name the problem %q", out.String(), tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "ab")); !os.IsNotExist(err) {
		t.Errorf("an A/B directory was written for bad input: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "workload")); !os.IsNotExist(err) {
		t.Errorf("a workload's results directory was written for bad input: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "suite-results")); !os.IsNotExist(err) {
		t.Errorf("a suite's results directory was written for bad input: %v", err)
	}
}

func TestSeveralProblemsReportedAtOnce(t *testing.T) {
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"tpcc", "--target", t.TempDir(), "--warehouses", "0", "--users", "x"})
	if code != exitUsage || !strings.Contains(out.String(), "--warehouses") || !strings.Contains(out.String(), "--users") {
		t.Fatalf("code %d, output %q", code, out.String())
	}
}

func TestTargetSafety(t *testing.T) {
	t.Run("device node", func(t *testing.T) {
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), []string{"tpcc", "--target", "/dev/null", "--results", t.TempDir()})
		if code != exitUsage || !strings.Contains(out.String(), "is a device node") {
			t.Fatalf("code %d, output %q", code, out.String())
		}
	})
	t.Run("foreign dbio directory", func(t *testing.T) {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, "dbio"), 0o755)
		os.WriteFile(filepath.Join(dir, "dbio", "precious"), []byte("user data"), 0o644)
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), []string{"tpcc", "--target", dir, "--results", t.TempDir()})
		if code != exitUsage || !strings.Contains(out.String(), "did not create") {
			t.Fatalf("code %d, output %q", code, out.String())
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "dbio", "precious")); string(b) != "user data" {
			t.Fatal("user data touched")
		}
	})
	t.Run("too little space", func(t *testing.T) {
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), []string{"tpcc", "--target", t.TempDir(), "--warehouses", "90000", "--results", t.TempDir()})
		if code != exitUsage || !strings.Contains(out.String(), "need about") {
			t.Fatalf("code %d, output %q", code, out.String())
		}
	})
}

// TestQuickEndToEnd runs dbio quick with short steps, as a user does, on
// an 80-column terminal, and reads the results back. Every line that is
// redrawn fits in 79 columns (a wider one would wrap and leave its first
// part behind when redrawn), and while the device pass runs, its line
// counts the TPC-C steps after it in the run's time left, to its last
// point.
func TestQuickEndToEnd(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("runs fio and real steps")
	}
	script := testenv.RequireProgram(t, "script", "apt-get install -y bsdutils")
	testenv.RequireProgram(t, "fio", testenv.InstallFio)
	dir, res := t.TempDir(), t.TempDir()
	cmdline := strings.Join([]string{"stty cols 80 rows 24;", os.Args[0], "quick", "--target", dir, "--results", res,
		"--users", "1,2", "--ramp-time", "1s", "--runtime", "2s", "--disk-runtime", "1s"}, " ")
	p := startProgram(t, script, "-qefc", cmdline, "/dev/null")
	if code := p.exit(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	// The terminal ends each line with "\r\n".
	out := strings.ReplaceAll(p.out.String(), "\r\n", "\n")
	for _, want := range []string{"COMPLETED", "TPM", "NOPM", "pass    4: sum(O_OL_CNT) = count(ORDER-LINE)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		segs := strings.Split(line, "\r")
		for _, seg := range segs[:len(segs)-1] {
			if n := utf8.RuneCountInString(seg); n > 79 {
				t.Errorf("a line of %d columns redrawn on an 80-column terminal: %q", n, seg)
			}
		}
	}
	points := regexp.MustCompile(`\[(\d+)/(\d+)\] (\S+):`).FindAllStringSubmatch(out, -1)
	if len(points) == 0 || points[len(points)-1][1] != points[len(points)-1][2] {
		t.Fatalf("no fio points:\n%q", out)
	}
	last := points[len(points)-1][3]
	if !regexp.MustCompile(regexp.QuoteMeta(last) + ` [^\r]*run \d+:\d\d`).MatchString(out) {
		t.Errorf("the last fio point's line (%s) does not count the TPC-C steps after it in the run's time left:\n%q", last, out)
	}
	if strings.Contains(out, "loaded warehouse") || !strings.Contains(out, "loaded 1 warehouse: ") {
		t.Errorf("the load did not say its total in one line:\n%q", out)
	}
	runs, _ := filepath.Glob(filepath.Join(res, "*"))
	if len(runs) != 1 {
		t.Fatalf("results directories: %v", runs)
	}
	l, err := results.Load(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	fioSteps, logWrites := 0, 0
	for _, s := range l.Steps {
		if s.Kind == "fio" {
			fioSteps++
		}
		if _, ok := s.Figure("lat_p50_us"); ok && s.Fio != nil && s.Fio.LogWrite() {
			logWrites++
		}
	}
	if fioSteps != 8 || logWrites != 2 {
		t.Errorf("%d fio points, %d log-write points with a p50; want the six corners and two log-write points", fioSteps, logWrites)
	}
	if _, err := os.Stat(filepath.Join(runs[0], "report.html")); err != nil {
		t.Error("quick wrote no report.html")
	}
	if l.Run.Status != results.StatusCompleted || len(l.Steps) < 2 {
		t.Fatalf("status %s, %d steps", l.Run.Status, len(l.Steps))
	}
	if tpm, ok := l.Steps[len(l.Steps)-1].Figure("tpm"); !ok || tpm <= 0 {
		t.Errorf("last step TPM %v", tpm)
	}
	if len(l.Series.Rows) < 4 || l.Series.Column("tpm") < 0 {
		t.Errorf("series: %d rows, columns %v", len(l.Series.Rows), l.Series.Columns)
	}
	if _, err := os.Stat(filepath.Join(dir, "dbio", ".dbio-owned")); err != nil {
		t.Error("no safety marker in the target")
	}
}

// TestInterruptKeepsResults cancels a run in its second step, as Ctrl-C does.
func TestInterruptKeepsResults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real steps")
	}
	dir, res := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the second step has measured a second: it is in progress.
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil && !seriesHas(res, "users-2", "measure") {
			<-tick.C
		}
		cancel()
	}()
	var out bytes.Buffer
	code := run(ctx, testApp(&out), []string{"quick", "--target", dir, "--results", res, "--users", "1,2,3", "--ramp-time", "0s", "--runtime", "3s", "--disk-runtime", "0"})
	if code != exitInterrupted {
		t.Fatalf("exit code %d, want %d:\n%s", code, exitInterrupted, out.String())
	}
	runs, _ := filepath.Glob(filepath.Join(res, "*"))
	l, err := results.Load(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Status != results.StatusInterrupted {
		t.Errorf("status %s, want interrupted", l.Run.Status)
	}
	if got, want := stepStatuses(l), []results.Status{results.StatusCompleted, results.StatusInterrupted}; !slices.Equal(got, want) {
		t.Fatalf("steps kept %v, want the finished one and the one in progress %v", got, want)
	}
	if !strings.Contains(out.String(), "INTERRUPTED") {
		t.Errorf("summary does not say the run was interrupted:\n%s", out.String())
	}
}

func TestSplitWords(t *testing.T) {
	tests := map[string][]string{
		"--buffer-pool 64MB":             {"--buffer-pool", "64MB"},
		`--setting "work_mem=64MB"  --x`: {"--setting", "work_mem=64MB", "--x"},
		`--name 'two words'`:             {"--name", "two words"},
		"":                               nil,
	}
	for in, want := range tests {
		got, err := splitWords(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("splitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := splitWords(`--a "open`); err == nil {
		t.Error("unclosed quote accepted")
	}
}

// TestABOfTwoBufferPools runs the A/B study of two SQLite cache sizes and
// checks the A/B table with its verdicts and the comparison report.
func TestABOfTwoBufferPools(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real steps")
	}
	res := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"ab", "--a", "--buffer-pool 1MB", "--b", "--buffer-pool 256MB",
		"--results", res, "--", "tpcc", "--target", t.TempDir(), "--users", "1,2", "--ramp-time", "0s", "--runtime", "2s"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	// One run a side can never show a difference: said before the first
	// run, and once under the table; each finished run says its figure.
	text := out.String()
	for _, want := range []string{"== A/B: A --buffer-pool 1MB vs B --buffer-pool 256MB ==", "average", "verdict: too few runs to tell (4 a side needed)",
		"A 1/1: ", " TPM at ", "(1 run left: about ", "B 1/1: "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	note := strings.Index(text, "note: with 1 run a side no difference can be called, however large: that takes 4 a side (--repeat 4)")
	if first := strings.Index(text, "=== A/B run 1"); note < 0 || first < note {
		t.Errorf("the note that the runs are too few is not before the first run (at %d, the run at %d)", note, first)
	}
	md, _ := filepath.Glob(filepath.Join(res, "*-ab", "ab.md"))
	html, _ := filepath.Glob(filepath.Join(res, "*-ab", "compare.html"))
	if len(md) != 1 || len(html) != 1 {
		t.Fatalf("ab.md %v, compare.html %v", md, html)
	}
	b, _ := os.ReadFile(md[0])
	if !strings.Contains(string(b), "| **average** |") {
		t.Errorf("ab.md has no averages:\n%s", b)
	}
}
