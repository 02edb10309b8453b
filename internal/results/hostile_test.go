package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Results directories are handed around between people: these tests read
// directories built to harm their reader.

// writeRun writes a minimal results directory at dir: run.json, one step
// and a series.
func writeRun(t testing.TB, dir string) {
	t.Helper()
	files := map[string]string{
		"run.json":                      `{"schema_version":1,"kind":"tpcc","status":"completed"}`,
		"steps/00-users-1/summary.json": `{"index":0,"name":"users-1","kind":"tpcc","status":"completed"}`,
		"series.csv":                    "time,elapsed_s,step,phase,tpm\n2026-11-22T10:00:00Z,1.000,users-1,measure,10\n",
	}
	for rel, text := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// replace puts what make builds in place of rel in dir.
func replace(t *testing.T, dir, rel string, make func(path string) error) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := make(p); err != nil {
		t.Fatal(err)
	}
}

func fifo(p string) error { return syscall.Mkfifo(p, 0o644) }

func symlinkTo(target string) func(string) error {
	return func(p string) error { return os.Symlink(target, p) }
}

// Load refuses, with an error wrapping ErrUntrusted that names the file,
// every file of a results directory that is a link (to a file, or a
// directory on the way), a named pipe (at once, without waiting for a
// writer), a socket, or larger than dbio writes it; it reads nothing
// through a link.
func TestLoadRefusesWhatDbioNeverWrites(t *testing.T) {
	elsewhere := t.TempDir()
	writeRun(t, elsewhere)
	cases := []struct {
		name, rel string
		make      func(string) error
		say       string
	}{
		{"run.json a link", "run.json", symlinkTo(filepath.Join(elsewhere, "run.json")), "run.json is a symbolic link"},
		{"run.json a named pipe", "run.json", fifo, "run.json is a named pipe, not a regular file"},
		{"run.json a socket", "run.json", func(p string) error {
			l, err := net.Listen("unix", p)
			if err == nil {
				t.Cleanup(func() { l.Close() })
			}
			return err
		}, "run.json is a socket"},
		{"run.json a directory", "run.json", func(p string) error { return os.Mkdir(p, 0o755) }, "run.json is a directory"},
		{"run.json too large", "run.json", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(MaxJSONBytes + 1) // sparse: no disk used
		}, "larger than 64 MiB"},
		{"steps a link", "steps", symlinkTo(filepath.Join(elsewhere, "steps")), "steps is a symbolic link"},
		{"a step a link", "steps/00-users-1", symlinkTo(filepath.Join(elsewhere, "steps", "00-users-1")), "00-users-1 is a symbolic link"},
		{"summary.json a link", "steps/00-users-1/summary.json", symlinkTo(filepath.Join(elsewhere, "steps", "00-users-1", "summary.json")), "summary.json is a symbolic link"},
		{"summary.json a named pipe", "steps/00-users-1/summary.json", fifo, "summary.json is a named pipe"},
		{"series.csv a link", "series.csv", symlinkTo(filepath.Join(elsewhere, "series.csv")), "series.csv is a symbolic link"},
		{"series.csv a named pipe", "series.csv", fifo, "series.csv is a named pipe"},
		{"series.csv a line of 2 MiB", "series.csv", func(p string) error {
			return os.WriteFile(p, []byte("time,elapsed_s,step,phase,tpm\n2026-11-22T10:00:00Z,1,"+strings.Repeat("x", 2<<20)+",measure,1\n"), 0o644)
		}, "series.csv has a line longer than 1024 KiB"},
		{"series.csv a quoted field of many lines", "series.csv", func(p string) error {
			return os.WriteFile(p, []byte("time,elapsed_s,step,phase,tpm\n2026-11-22T10:00:00Z,1,\""+strings.Repeat("x\n", 1<<20)+"\",measure,1\n"), 0o644)
		}, "series.csv has a line longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, dir)
			replace(t, dir, c.rel, c.make)
			l, err := Load(dir)
			if !errors.Is(err, ErrUntrusted) {
				t.Fatalf("Load = %+v, %v; want a refusal (ErrUntrusted)", l, err)
			}
			if !strings.Contains(err.Error(), c.say) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "as dbio wrote it") {
				t.Errorf("the refusal %q does not say %q, name the file and the fix", err, c.say)
			}
		})
	}
}

// A record dbio writes whole (through a rename) that does not decode, or
// a series.csv that is not CSV as dbio writes it, was changed since dbio
// wrote it: refused as untrusted, naming the file. A directory without
// run.json is not results at all.
func TestLoadRefusesDamagedRecords(t *testing.T) {
	cases := []struct {
		name, rel, text string
		want            error
		say             string
	}{
		{"run.json not JSON", "run.json", `{"kind":`, ErrUntrusted, "run.json: unexpected end of JSON input"},
		{"run.json of another type", "run.json", `{"kind":3}`, ErrUntrusted, "run.json: json: cannot unmarshal"},
		{"summary.json not JSON", "steps/00-users-1/summary.json", `[`, ErrUntrusted, "summary.json: unexpected end"},
		{"series.csv another header", "series.csv", "a,b\n1,2\n", ErrUntrusted, "series.csv: the header does not start with time,elapsed_s,step,phase"},
		{"series.csv a bare quote", "series.csv", "time,elapsed_s,step,phase\n2026-11-22T10:00:00Z,1,a\"b,measure\n", ErrUntrusted, "series.csv: parse error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, dir)
			if err := os.WriteFile(filepath.Join(dir, c.rel), []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.say) || !strings.Contains(err.Error(), "as dbio wrote it") {
				t.Errorf("Load = %v; want %v saying %q", err, c.want, c.say)
			}
		})
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrNotResults) || !strings.Contains(err.Error(), "(no run.json)") {
		t.Errorf("Load of a directory without run.json = %v", err)
	}
	pipe := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(pipe); !errors.Is(err, ErrNotResults) {
		t.Errorf("Load of a named pipe named as the directory = %v", err)
	}
	if _, err := LoadSuite(t.TempDir()); !errors.Is(err, ErrNotResults) || !strings.Contains(err.Error(), "not a dbio suite directory (no suite.json)") {
		t.Errorf("LoadSuite of a directory without suite.json = %v", err)
	}
}

// FuzzPrintableJSON: whatever JSON a results directory holds, made
// printable it is still JSON, decodes to strings without a control
// character but tabs and newlines, and decodes as before when it had none.
func FuzzPrintableJSON(f *testing.F) {
	for _, s := range []string{`{"a":"x\u001b[2J","b":["\r\b\f","\\u001b",1.5e3,null]}`, `"` + "\u0085\u2028\x7f" + `"`, `{"k\u0007":"v"}`, `"\ud83d\ude00 \"q\" \\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var before any
		if json.Unmarshal(b, &before) != nil {
			return
		}
		p := printableJSON(b)
		var after any
		if err := json.Unmarshal(p, &after); err != nil {
			t.Fatalf("%q made printable is %q, not JSON: %v", b, p, err)
		}
		text := fmt.Sprint(after)
		for _, r := range text {
			if isControl(r) {
				t.Fatalf("%q decodes to %q, with %U", p, text, r)
			}
		}
		if !strings.ContainsFunc(fmt.Sprint(before), isControl) && fmt.Sprint(before) != text {
			t.Errorf("%q without a control character decodes to %q, was %q", b, text, fmt.Sprint(before))
		}
	})
}

// A directory the user names through a link of their own is read: only
// what lies below it is untrusted.
func TestLoadFollowsTheLinkTheUserNames(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "run"))
	if err := os.Symlink("run", filepath.Join(dir, "latest")); err != nil {
		t.Fatal(err)
	}
	l, err := Load(filepath.Join(dir, "latest"))
	if err != nil || len(l.Steps) != 1 || len(l.Series.Rows) != 1 {
		t.Fatalf("Load through the user's link: %+v, %v", l, err)
	}
}

// A suite.json that names a run outside the suite's directory ("../x"), or
// reaches one through a link, is refused, and the run it names is neither
// read nor rewritten, even one that looks abandoned (which Load would
// otherwise settle by rewriting its run.json).
func TestLoadSuiteKeepsRunsInside(t *testing.T) {
	cases := []struct {
		name, recorded string
		link           bool
		say            string
	}{
		{"parent", "../x", false, `"../x" leaves`},
		{"parent of a subdirectory", "set/../../x", false, `"set/../../x" leaves`},
		{"a link inside", "inside", true, "inside is a symbolic link"},
		{"a link under an absolute path", "/old/place/inside", true, "inside is a symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			suite, sibling := filepath.Join(top, "suite"), filepath.Join(top, "x")
			writeRun(t, sibling)
			abandoned := []byte(`{"schema_version":1,"kind":"tpcc","status":"running"}`)
			if err := os.WriteFile(filepath.Join(sibling, "run.json"), abandoned, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sibling, lockName), []byte("pid 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(suite, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.link {
				if err := os.Symlink(sibling, filepath.Join(suite, "inside")); err != nil {
					t.Fatal(err)
				}
			}
			record := fmt.Sprintf(`{"plan":{"name":"s","runs":[{"name":"a","kind":"tpcc"}]},"outcome":{"runs":[{"name":"a","dir":%q,"status":"completed"}]}}`, c.recorded)
			if err := os.WriteFile(filepath.Join(suite, SuiteFile), []byte(record), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := LoadSuite(suite)
			if err == nil {
				// What a report of the suite goes on to do with it.
				s.Repeats("a")
			}
			if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), c.say) || !strings.Contains(err.Error(), "run a") {
				t.Errorf("LoadSuite = %v; want a refusal saying %q", err, c.say)
			}
			if b, _ := os.ReadFile(filepath.Join(sibling, "run.json")); string(b) != string(abandoned) {
				t.Errorf("the run outside the suite was rewritten:\n%s", b)
			}
		})
	}
}

// A repeat set's manifest that names a repeat outside its directory, or
// through a link, is refused before any repeat is read.
func TestRepeatSetKeepsRunsInside(t *testing.T) {
	for _, rec := range []string{"../x", "/tmp/x", "r1/../../x", "link"} {
		t.Run(rec, func(t *testing.T) {
			top := t.TempDir()
			set := filepath.Join(top, "set")
			writeRun(t, filepath.Join(top, "x"))
			if err := os.MkdirAll(set, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(top, "x"), filepath.Join(set, "link")); err != nil {
				t.Fatal(err)
			}
			manifest := fmt.Sprintf(`{"schema_version":1,"name":"s","kind":"tpcc","repeats":1,"runs":[%q],"status":"completed"}`, rec)
			if err := os.WriteFile(filepath.Join(set, RepeatSetFile), []byte(manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			_, runs, err := LoadRepeatSet(set)
			if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), RepeatSetFile) {
				t.Errorf("LoadRepeatSet = %d runs, %v; want a refusal naming %s", len(runs), err, RepeatSetFile)
			}
		})
	}
}

// Control characters in what a results directory holds (run.json's strings,
// escaped or raw, its configuration, a step's name, series.csv's names)
// come out of Load as visible escapes: nothing read from a results
// directory can drive a terminal.
func TestLoadMakesEveryStringPrintable(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir)
	run := `{"schema_version":1,"kind":"tpcc\u001b[2J","status":"failed",` +
		`"error":"clip\u001b]52;c;ZXZpbA==\u0007 \r\u001b[32mOK\u001b[0m\nnext line\ttab",` +
		`"notes":["raw C1 ` + "\u009b" + `31m, DEL ` + "\x7f" + `, separators ` + "\u2028\u2029" + `, bidi ` + "\u202e\u2066" + ` and \b\f"],` +
		`"config":{"engine":"sqlite\u001b[2J","tpcc":{"name\u001b":"v\u0085"}}}`
	files := map[string]string{
		"run.json":                      run,
		"steps/00-users-1/summary.json": `{"index":0,"name":"users-1\u001b[H","status":"completed"}`,
		"series.csv":                    "time,elapsed_s,step,phase,tpm\x1b[2J\n2026-11-22T10:00:00Z,1,users-1\x1b[H,measure\r,10\n",
	}
	for rel, text := range files {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ got, want string }{
		{l.Run.Kind, `tpcc\x1b[2J`},
		{l.Run.Error, `clip\x1b]52;c;ZXZpbA==\x07 \r\x1b[32mOK\x1b[0m` + "\nnext line\ttab"},
		{l.Run.Notes[0], `raw C1 \u009b31m, DEL \x7f, separators \u2028\u2029, bidi \u202e\u2066 and \x08\x0c`},
		{l.Run.Config.Engine, `sqlite\x1b[2J`},
		{l.Run.Config.Workload, "tpcc"},
		{l.Run.Config.Settings.Text(`name\x1b`), `v\u0085`},
		{l.Steps[0].Name, `users-1\x1b[H`},
		{l.Series.Columns[0], `tpm\x1b[2J`},
		{l.Series.Rows[0].Step, `users-1\x1b[H`},
		{l.Series.Rows[0].Phase, `measure\r`},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("read %q, want %q", c.got, c.want)
		}
	}
}

// Printable leaves text without controls as it is, and shows each control
// character and each byte that is not UTF-8 as an escape.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"users-8 · 4k-randread, é": "users-8 · 4k-randread, é",
		"line\nnext\ttab":          "line\nnext\ttab",
		"\x1b]52;c;eA==\x07":       `\x1b]52;c;eA==\x07`,
		"\r\x00\x7f":               `\r\x00\x7f`,
		"\u0085\u009b\u2028\u2029": `\u0085\u009b\u2028\u2029`,
		"bad \x9b byte \xff":       `bad \x9b byte \xff`,
		"\ufffd kept":              "\ufffd kept",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// writeSeries writes a series.csv of rows rows: cols value columns, each
// cell as cell(row, column) gives it.
func writeSeries(t testing.TB, path string, rows, cols int, cell func(r, c int) string) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("time,elapsed_s,step,phase")
	for c := range cols {
		fmt.Fprintf(w, ",col_%d", c)
	}
	w.WriteString("\n")
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for r := range rows {
		fmt.Fprintf(w, "%s,%d.000,users-%d,measure", start.Add(time.Duration(r)*time.Second).Format(time.RFC3339), r, 1+r/3600)
		for c := range cols {
			w.WriteString(",")
			w.WriteString(cell(r, c))
		}
		w.WriteString("\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	return fi.Size()
}

// cycling gives a value for every cell: row r's is r%1000 + 0.5.
func cycling() func(r, c int) string {
	v := make([]string, 1000)
	for i := range v {
		v[i] = strconv.Itoa(i) + ".5"
	}
	return func(r, _ int) string { return v[r%1000] }
}

// heapAfter is the live heap, and the heap obtained from the system, after
// a collection.
func heapAfter() (live, sys uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.HeapSys
}

// A day of one row a second and 100 columns, as a long run writes it,
// loads whole.
func TestADayOfSeriesLoadsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 70 MB series")
	}
	dir := t.TempDir()
	writeRun(t, dir)
	const day, cols = 86400, 100
	writeSeries(t, filepath.Join(dir, "series.csv"), day, cols, cycling())
	before, _ := heapAfter()
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	live, _ := heapAfter()
	if len(l.Series.Rows) != day || l.Series.Every != 1 || l.Series.Rows[day-1].Values[cols-1] != 399.5 {
		t.Fatalf("%d rows, every %d, last value %v", len(l.Series.Rows), l.Series.Every, l.Series.Rows[day-1].Values[cols-1])
	}
	t.Logf("a day of %d columns keeps %d MB", cols, (live-before)>>20)
	runtime.KeepAlive(l)
}

// A series larger than SeriesBudget (here 1,000 columns of empty cells, a
// byte of file for eight of memory) keeps no more than the budget: the
// rows are thinned as they are read, and the heap the whole read took
// from the system stays within twice the budget (what Go's collector
// lets grow before it collects) however large the file.
func TestSeriesMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 21 MB series")
	}
	dir := t.TempDir()
	writeRun(t, dir)
	const cols = 1000
	// 20,000 rows would keep 162 MB whole.
	size := writeSeries(t, filepath.Join(dir, "series.csv"), 20000, cols, func(int, int) string { return "" })
	before, sysBefore := heapAfter()
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	live, sys := heapAfter()
	kept := live - before
	t.Logf("a %d MB series with %d columns: %d rows kept (one in %d), %d MB live, heap grew by %d MB", size>>20, cols, len(l.Series.Rows), l.Series.Every, kept>>20, (sys-sysBefore)>>20)
	if l.Series.Every < 2 {
		t.Errorf("a series beyond the budget was kept whole (%d rows)", len(l.Series.Rows))
	}
	if kept > SeriesBudget {
		t.Errorf("the series keeps %d MB, beyond its budget of %d MB", kept>>20, SeriesBudget>>20)
	}
	if grown := sys - sysBefore; sys > sysBefore && grown > 2*SeriesBudget {
		t.Errorf("reading the series took %d MB of heap, beyond twice its budget of %d MB", grown>>20, SeriesBudget>>20)
	}
	// The rows kept are evenly spaced, every one of them whole.
	for i, r := range l.Series.Rows {
		if want := float64(i * l.Series.Every); r.ElapsedS != want || len(r.Values) != cols {
			t.Fatalf("row %d at %v s with %d values, want %v s", i, r.ElapsedS, len(r.Values), want)
		}
	}
	runtime.KeepAlive(l)
}

// BenchmarkLoadSeries reports what loading an hour of 100 columns
// allocates in all (B/op) and keeps (kept-B).
func BenchmarkLoadSeries(b *testing.B) {
	dir := b.TempDir()
	writeRun(b, dir)
	writeSeries(b, filepath.Join(dir, "series.csv"), 3600, 100, cycling())
	b.ReportAllocs()
	var kept uint64
	for b.Loop() {
		before, _ := heapAfter()
		l, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		live, _ := heapAfter()
		kept = live - before
		runtime.KeepAlive(l)
	}
	b.ReportMetric(float64(kept), "kept-B")
}
