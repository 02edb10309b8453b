package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// Results directories are handed around between people: dbio report, runs
// and compare read them as hostile input.

// editRunJSON changes the run.json of the results directory dir.
func editRunJSON(t *testing.T, dir string, edit func(run map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, "run.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var run map[string]any
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	edit(run)
	if b, err = json.Marshal(run); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// listing is what a directory holds: each file's path and content.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// A report whose csv directory is a link, or a directory dbio did not make,
// is refused with exit code 2 before anything is written: the linked
// directory, even one carrying dbio's marker, keeps every file as it was.
func TestReportNeverWritesThroughALink(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(csv, victim string) error
		say  string
	}{
		{"csv a link to a marked directory", func(csv, victim string) error { return os.Symlink(victim, csv) }, "csv is a symbolic link"},
		{"csv a directory dbio did not make", func(csv, _ string) error { return os.Mkdir(csv, 0o755) }, "csv already exists and was not created by dbio"},
		{"csv a file", func(csv, _ string) error { return os.WriteFile(csv, []byte("mine"), 0o644) }, "csv is not a directory dbio created"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			results := copyRun(t, "quick-ext4", dir)
			victim := filepath.Join(dir, "victim")
			if err := os.Mkdir(victim, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, text := range map[string]string{".dbio-owned": "created by dbio report\n", "precious.csv": "a,b\n1,2\n"} {
				if err := os.WriteFile(filepath.Join(victim, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.make(filepath.Join(results, "csv"), victim); err != nil {
				t.Fatal(err)
			}
			before := listing(t, victim)
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), []string{"report", results})
			if code != exitUsage || !strings.Contains(out.String(), c.say) || !strings.Contains(out.String(), "choose another output path") {
				t.Errorf("exit %d, want %d saying %q and the fix:\n%s", code, exitUsage, c.say, out.String())
			}
			if after := listing(t, victim); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the directory behind the link changed:\nbefore %v\nafter  %v", before, after)
			}
			if _, err := os.Stat(filepath.Join(results, "report.html")); err == nil {
				t.Error("the report was written although its csv directory was refused")
			}
		})
	}
}

// A run.json that is a named pipe is refused at once, with exit code 2
// (or listed as unreadable by dbio runs), never waited on.
func TestNamedPipeInAResultsDirectoryIsRefused(t *testing.T) {
	base := t.TempDir()
	pipe := copyRun(t, "quick-ext4", base)
	other := copyRun(t, "quick-tmpfs", t.TempDir())
	if err := os.Remove(filepath.Join(pipe, "run.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(pipe, "run.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	say := filepath.Join(pipe, "run.json") + " is a named pipe, not a regular file"
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"report", pipe}, exitUsage},
		{[]string{"compare", other, pipe, "-o", filepath.Join(t.TempDir(), "c.html")}, exitUsage},
		{[]string{"runs", "--results", base}, exitOK},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), c.args)
			if code != c.code || !strings.Contains(out.String(), say) {
				t.Errorf("exit %d, want %d saying %q:\n%s", code, c.code, say, out.String())
			}
		})
	}
}

// A suite.json that records a run's directory as "../x" is refused with
// exit code 2, and the sibling directory it names is neither read nor
// rewritten, though its run.json says running and its lock is free (which
// would have it rewritten as abandoned).
func TestSuiteReportStaysInsideTheSuite(t *testing.T) {
	top := t.TempDir()
	suite := filepath.Join(top, "suite")
	sibling := copyRun(t, "quick-ext4", top)
	editRunJSON(t, sibling, func(run map[string]any) { run["status"] = "running" })
	if err := os.WriteFile(filepath.Join(sibling, ".dbio-run.lock"), []byte("pid 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(suite, 0o755); err != nil {
		t.Fatal(err)
	}
	// The expectation has the report read run a's directory.
	record := `{"plan":{"name":"s","runs":[{"name":"a","kind":"tpcc"}],` +
		`"expect":[{"finding":"f","figure":"tpm","a":"a","b":"a","relation":"lower","step_a":"largest","step_b":"largest","floor":0.3}]},` +
		`"outcome":{"runs":[{"name":"a","dir":"../quick-ext4","status":"completed"}]}}`
	if err := os.WriteFile(filepath.Join(suite, "suite.json"), []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	before := listing(t, sibling)
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"report", suite})
	if code != exitUsage || !strings.Contains(out.String(), `"../quick-ext4" leaves`) {
		t.Errorf("exit %d, want %d naming the path outside the suite:\n%s", code, exitUsage, out.String())
	}
	if after := listing(t, sibling); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("the run beside the suite was rewritten")
	}
}

// Control characters in what a results directory records (its run.json's
// strings, its directory's name) reach the terminal as visible escapes in
// dbio runs, report and compare, never raw: no clipboard write (OSC 52),
// no cleared screen, no line overwritten with a fake one.
func TestControlCharactersNeverReachTheTerminal(t *testing.T) {
	base := t.TempDir()
	hostile := copyRun(t, "quick-ext4", base)
	editRunJSON(t, hostile, func(run map[string]any) {
		run["status"] = "running" // said by report before its report: abandoned, with the error
		run["error"] = "x\x1b]52;c;ZXZpbA==\x07\x1b[2J\r\x1b[32mCOMPLETED all checks passed\x1b[0m\u009b2J\u2028"
		run["warnings"] = []string{"\x1b[2J"}
		env := run["environment"].(map[string]any)
		env["hostname"] = "vm\r\x1b[32m"
	})
	named := filepath.Join(base, "evil\x1b]52;c;ZXZpbA==\x07")
	if err := os.Rename(hostile, named); err != nil {
		t.Fatal(err)
	}
	other := copyRun(t, "quick-ext4", t.TempDir())
	for _, args := range [][]string{
		{"runs", "--results", base},
		{"report", named, "-o", filepath.Join(t.TempDir(), "r.html")},
		{"compare", other, named, "--force", "-o", filepath.Join(t.TempDir(), "c.html")},
	} {
		t.Run(args[0], func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), args)
			if code != exitOK {
				t.Fatalf("exit %d:\n%s", code, out.String())
			}
			text := out.String()
			for i, r := range text {
				if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 || (r == utf8.RuneError && text[i] >= 0x80 && text[i] <= 0x9f) {
					t.Fatalf("control character %U at byte %d reached the terminal:\n%q", r, i, text)
				}
			}
			if !strings.Contains(text, `\x1b]52;c;ZXZpbA==\x07`) {
				t.Errorf("the escape is not shown:\n%s", text)
			}
		})
	}
}

// -o names one of the report's files by its extension: x.md is the
// Markdown summary (the page goes to x.html beside it), x.html the page;
// a CSV file's name is refused with exit code 2 (a report has one CSV per
// table), and nothing is ever written over a file dbio did not write.
func TestReportOutputNamesOneFileByItsKind(t *testing.T) {
	const markdownMark, htmlMark = "<!-- generated by dbio report -->", "<!DOCTYPE html>"
	cases := []struct {
		name    string
		output  string
		foreign string // a file of the user's, there before
		code    int
		say     string
		files   map[string]string // written, and how each starts
	}{
		{"markdown", "x.md", "", exitOK, "summary: ",
			map[string]string{"x.md": markdownMark, "x.html": htmlMark, "x-csv/tpcc-steps.csv": ""}},
		{"html", "y.html", "", exitOK, "report: ",
			map[string]string{"y.html": htmlMark, "y.md": markdownMark}},
		{"no extension", "z", "", exitOK, "report: ",
			map[string]string{"z.html": htmlMark, "z.md": markdownMark}},
		{"csv", "t.csv", "", exitUsage, "a report has one CSV file per table", nil},
		{"another extension", "t.txt", "", exitUsage, "name either one", nil},
		{"markdown beside a page of the user's", "w.md", "w.html", exitUsage, "w.html already exists and was not written by dbio", nil},
		{"a link in the page's place", "l.html", "l.html@", exitUsage, "l.html is a symbolic link", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			runDir := copyRun(t, "quick-ext4", t.TempDir())
			if c.foreign != "" {
				p := filepath.Join(dir, strings.TrimSuffix(c.foreign, "@"))
				var err error
				if strings.HasSuffix(c.foreign, "@") {
					err = os.Symlink(filepath.Join(dir, "elsewhere.html"), p)
				} else {
					err = os.WriteFile(p, []byte("<p>mine</p>"), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			before := listing(t, dir)
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), []string{"report", runDir, "-o", filepath.Join(dir, c.output)})
			if code != c.code || !strings.Contains(out.String(), c.say) {
				t.Fatalf("exit %d, want %d saying %q:\n%s", code, c.code, c.say, out.String())
			}
			if c.files == nil {
				if after := listing(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("a refused report wrote %v", after)
				}
				return
			}
			for name, start := range c.files {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || !strings.HasPrefix(string(b), start) {
					t.Errorf("%s: %v, starts %.40q, want %q", name, err, b, start)
				}
			}
		})
	}
}

// processArgs carries, in the environment, the command line a child copy
// of this test binary runs as the dbio process (see TestDbioProcess).
const processArgs = "DBIO_PROCESS_TEST_ARGS"

// TestDbioProcess is not a test: started with processArgs set, this test
// binary is dbio, as main runs it (its signals included).
func TestDbioProcess(t *testing.T) {
	raw := os.Getenv(processArgs)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Exit(99)
	}
	os.Exit(runProcess(append([]string{"dbio"}, args...)))
}

// hasOpen says whether the process pid has a file whose path ends in name open.
func hasOpen(pid int, name string) bool {
	fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	for _, fd := range fds {
		if p, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name())); err == nil && strings.HasSuffix(p, name) {
			return true
		}
	}
	return false
}

// dbio report, runs and compare run nothing: SIGTERM (and Ctrl-C) end them
// at once, as their default effect, even in the middle of reading a large
// series, where they used to carry on to the end.
func TestReadOnlyCommandsStopOnSIGTERM(t *testing.T) {
	dir := copyRun(t, "quick-ext4", t.TempDir())
	// A series that takes seconds to read: two days of one row a second.
	f, err := os.Create(filepath.Join(dir, "series.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("time,elapsed_s,step,phase,tpm,nopm,cpu_user_pct,cpu_system_pct,cpu_idle_pct,cpu_iowait_pct\n")
	for i := range 172800 {
		fmt.Fprintf(&b, "2026-11-22T00:00:00Z,%d.000,users-1,measure,19560.5,8000.25,40.5,10.25,45.125,4.0625\n", i)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, args := range [][]string{
		{"report", dir, "-o", filepath.Join(t.TempDir(), "r.html")},
		{"compare", dir, dir, "-o", filepath.Join(t.TempDir(), "c.html")},
	} {
		t.Run(args[0], func(t *testing.T) {
			raw, _ := json.Marshal(args)
			cmd := exec.Command(os.Args[0], "-test.run=^TestDbioProcess$")
			cmd.Env = append(os.Environ(), processArgs+"="+string(raw))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Once it reads the series it runs the command: signal it then.
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for !hasOpen(cmd.Process.Pid, "series.csv") {
				select {
				case err := <-done:
					t.Fatalf("dbio %s ended (%v) before it was seen reading the series:\n%s", args[0], err, out.String())
				case <-tick.C:
				}
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			err := <-done
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Errorf("dbio %s went on after SIGTERM and ended with %v:\n%s", args[0], err, out.String())
			}
		})
	}
}

// terminalText shows control characters as escapes and keeps a character
// whole when a write ends half-way through it.
func TestTerminalTextShowsControlCharacters(t *testing.T) {
	var out bytes.Buffer
	w := &terminalText{w: &out}
	for _, part := range []string{"a\x1b[2J\r\n\t", "\xc3", "\xa9 \xe2\x80", "\xa8 \u009b", "\xc3"} {
		if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", part, n, err)
		}
	}
	w.Flush()
	if want := `a\x1b[2J\r` + "\n\té " + `\u2028 \u009b\xc3`; out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
}
