package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"dbio/internal/history"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// TestRunsAreRemembered runs a short TPC-C on SQLite with --history in a
// temporary directory and a label: the history lists it, its NOPM trend
// has its step, and importing its results directory again changes nothing.
func TestRunsAreRemembered(t *testing.T) {
	t.Parallel()
	dir, res := t.TempDir(), t.TempDir()
	store := filepath.Join(t.TempDir(), "history.db")
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"tpcc", "--target", dir, "--results", res, "--warehouses", "1",
		"--users", "1", "--ramp-time", "0s", "--runtime", "2s", "--history", store, "--label", "nightly"})
	if code != exitOK {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
	trend := func() []trendRow {
		t.Helper()
		var out bytes.Buffer
		if code := run(context.Background(), testApp(&out), []string{"history", "--history", store, "--figure", "nopm", "--label", "nightly", "--format", "json"}); code != exitOK {
			t.Fatalf("history: exit code %d:\n%s", code, out.String())
		}
		var rows []trendRow
		if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
			t.Fatalf("%v:\n%s", err, out.String())
		}
		return rows
	}
	rows := trend()
	if len(rows) != 1 || rows[0].Step != "users-1" || rows[0].Value <= 0 || rows[0].Unit != "new-orders/min" || len(rows[0].Labels) != 1 {
		t.Fatalf("trend %+v", rows)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"history", "import", "--history", store, res}); code != exitOK || !strings.Contains(out.String(), "1 run(s) remembered") {
		t.Fatalf("import: exit code %d:\n%s", code, out.String())
	}
	if again := trend(); len(again) != 1 || again[0].Value != rows[0].Value || again[0].Run != rows[0].Run {
		t.Errorf("after the import the trend is %+v, was %+v", again, rows)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"history", "--history", store, "--engine", "sqlite"}); code != exitOK || !strings.Contains(out.String(), "nightly") {
		t.Errorf("history list: exit code %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"history", "--history", store, "--figure", "nopmm"}); code != exitUsage {
		t.Errorf("an unknown figure: exit code %d:\n%s", code, out.String())
	}
	// The trend page (rendered and checked in Chromium by the report's tests).
	page := filepath.Join(t.TempDir(), "trend.html")
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"history", "--history", store, "--figure", "nopm", "--figure", "tpm", "--format", "html", "-o", page}); code != exitOK {
		t.Fatalf("trend page: exit code %d:\n%s", code, out.String())
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), `data-chart="trend-nopm-users-1"`) || !strings.Contains(string(b), `data-chart="trend-tpm-users-1"`) {
		t.Errorf("the trend page lacks a chart per figure (%v)", err)
	}
	for _, bad := range [][]string{{"--figure", "nopm", "--format", "html"}, {"--format", "html", "-o", page}, {"--figure", "nopm", "--format", "html", "-o", page + ".csv"}, {"--figure", "nopm", "-o", page}} {
		out.Reset()
		if code := run(context.Background(), testApp(&out), append([]string{"history", "--history", store}, bad...)); code != exitUsage {
			t.Errorf("%v: exit code %d, want %d:\n%s", bad, code, exitUsage, out.String())
		}
	}
}

// TestCheckFindsARegressionBeyondNoise checks recorded repeat sets against
// each other: five slow repeats against five fast ones are a regression
// (exit 1, naming the figure), the other way round none (exit 0).
func TestCheckFindsARegressionBeyondNoise(t *testing.T) {
	t.Parallel()
	fast, slow := filepath.Join("..", "..", "internal", "report", "testdata", "repeats-fast"), filepath.Join("..", "..", "internal", "report", "testdata", "repeats-slow")
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"check", slow, "--against", fast}); code != exitFailure ||
		!strings.Contains(out.String(), "REGRESSION sysbench 1, TPS: ") || !strings.Contains(out.String(), "5 against 5 repeats") {
		t.Errorf("slow against fast: exit code %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"check", fast, "--against", slow}); code != exitOK || !strings.Contains(out.String(), "no regression beyond the noise") {
		t.Errorf("fast against slow: exit code %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"check", fast}); code != exitUsage {
		t.Errorf("no --against: exit code %d:\n%s", code, out.String())
	}
}

// TestCheckFlagsAQuarterOfTheWriteIOPS runs three repeat sets of a small
// write-only sysbench on one disk, four repeats each (the fewest a side
// needs for the Mann-Whitney test to call anything at 5 %): a baseline
// capped at 400 write IOPS, a run capped at a quarter of that, and a rerun
// identical to the baseline. dbio check calls the quarter a regression
// (exit 1) against the baseline, and the rerun none (exit 0) against the
// last run of its configuration the history remembers, which is the
// baseline: the quarter's limit makes it another configuration.
func TestCheckFlagsAQuarterOfTheWriteIOPS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 12 real runs")
	}
	requireCap(t)
	disk := t.TempDir()
	st, err := target.HostFS().Resolve(disk)
	testenv.Require(t, err == nil && st.Device != "", "a temporary directory on a block device", testenv.HowBlockDeviceTemp)
	res, store := t.TempDir(), filepath.Join(t.TempDir(), "history.db")
	repeatSet := func(name, wiops string) string {
		t.Helper()
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), []string{"sysbench", "--workload", "oltp_write_only", "--table-size", "1000",
			"--users", "1", "--ramp-time", "0s", "--runtime", "2s", "--repeat", "4", "--target", disk, "--results", res, "--name", name,
			"--limit", "wiops=" + wiops, "--history", store})
		if code != exitOK {
			t.Fatalf("%s: exit code %d:\n%s", name, code, out.String())
		}
		dirs, _ := filepath.Glob(filepath.Join(res, "*-"+name))
		if len(dirs) != 1 {
			t.Fatalf("%s: repeat sets %v", name, dirs)
		}
		return dirs[0]
	}
	base := repeatSet("base", "400")
	quarter := repeatSet("quarter", "100")
	rerun := repeatSet("rerun", "400")

	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"check", quarter, "--against", base, "--history", store})
	t.Logf("the quarter against the baseline:\n%s", out.String())
	if code != exitFailure || !strings.Contains(out.String(), "REGRESSION ") || !strings.Contains(out.String(), "4 against 4 repeats") {
		t.Errorf("a quarter of the write IOPS: exit code %d, want %d with a regression named", code, exitFailure)
	}
	out.Reset()
	code = run(context.Background(), testApp(&out), []string{"check", rerun, "--against", "last", "--history", store})
	t.Logf("the rerun against the last of its configuration:\n%s", out.String())
	if code != exitOK || !strings.Contains(out.String(), "checked 4 run(s) against 4 baseline run(s)") || !strings.Contains(out.String(), "no regression beyond the noise") {
		t.Errorf("an identical rerun: exit code %d, want %d against the baseline's 4 runs", code, exitOK)
	}
}

// TestTwoProcessesEndingAtOnceBothLand runs two dbio processes whose
// runs end together into one SQLite store. The test holds the store's
// write lock from the start, so that neither can write before the other
// is ready to; it stops each process (SIGSTOP) once it has opened the
// store, then releases the lock and resumes both at the same instant: both
// write at once, and both runs must be in the store, with no warning.
// Stopped, a process spends none of its wait for the lock, however long
// the other's run takes.
func TestTwoProcessesEndingAtOnceBothLand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two real runs")
	}
	store := filepath.Join(t.TempDir(), "history.db")
	s, err := history.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite3", "file:"+store+"?_busy_timeout=30000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	locked := true
	defer func() {
		if locked {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()

	var procs []*runningDBIO
	for _, name := range []string{"one", "two"} {
		procs = append(procs, startDBIO(t, "sysbench", "--workload", "oltp_write_only", "--table-size", "1000", "--users", "1",
			"--ramp-time", "0s", "--runtime", "1s", "--target", t.TempDir(), "--results", t.TempDir(), "--name", name, "--history", store))
	}
	for _, p := range procs {
		p.waitFor("the store opened", func() bool { return holdsFile(p.cmd.Process.Pid, store) })
		p.signal(syscall.SIGSTOP)
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	locked = false
	for _, p := range procs {
		p.signal(syscall.SIGCONT)
	}
	for _, p := range procs {
		if code := p.exit(); code != exitOK || strings.Contains(p.out.String(), "not remembered") {
			t.Errorf("exit code %d:\n%s", code, p.out)
		}
	}
	s, err = history.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := s.List(context.Background(), history.Filter{})
	if err != nil || len(all) != 2 || all[0].ID == all[1].ID {
		t.Errorf("%d runs in the store (%v), want both", len(all), err)
	}
}

// holdsFile says whether process pid has path open.
func holdsFile(pid int, path string) bool {
	fds, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "fd", "*"))
	for _, fd := range fds {
		if to, err := os.Readlink(fd); err == nil && to == path {
			return true
		}
	}
	return false
}

// TestCheckReadsASingleRunAgainstEarlierRuns checks single recorded runs
// against twenty earlier ones (the five fast repeats, each copied four
// times under an id of its own): a slow run is worse than all of them
// beyond their spread (exit 1), a fast one is not (exit 0), and against
// five runs a single run is too little evidence to call anything. A later
// copy checked --against all is read against the twenty the history has.
func TestCheckReadsASingleRunAgainstEarlierRuns(t *testing.T) {
	t.Parallel()
	testdata := filepath.Join("..", "..", "internal", "report", "testdata")
	fast, _ := filepath.Glob(filepath.Join(testdata, "repeats-fast", "2026*"))
	slow, _ := filepath.Glob(filepath.Join(testdata, "repeats-slow", "2026*"))
	if len(fast) != 5 || len(slow) == 0 {
		t.Fatalf("testdata: %v %v", fast, slow)
	}
	root := t.TempDir()
	var against []string
	for copyN := range 4 {
		for _, dir := range fast {
			to := filepath.Join(root, fmt.Sprintf("%d-%s", copyN, filepath.Base(dir)))
			copyTree(t, dir, to, strings.NewReplacer(`"id": "`, fmt.Sprintf(`"id": "%d-`, copyN)))
			against = append(against, "--against", to)
		}
	}
	check := func(dir string, against ...string) (int, string) {
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), append([]string{"check", dir}, against...))
		return code, out.String()
	}
	if code, out := check(slow[0], against...); code != exitFailure || !strings.Contains(out, "REGRESSION sysbench 1, TPS: ") || !strings.Contains(out, "worse than all 20 earlier runs") {
		t.Errorf("a slow run against 20 fast ones: exit code %d:\n%s", code, out)
	}
	if code, out := check(fast[2], against...); code != exitOK || !strings.Contains(out, "read against the spread of the earlier runs") || !strings.Contains(out, "no regression beyond the noise") {
		t.Errorf("a fast run against 20 fast ones: exit code %d:\n%s", code, out)
	}
	if code, out := check(slow[0], against[:10]...); code != exitOK || !strings.Contains(out, "or a single run 19 earlier runs") {
		t.Errorf("a slow run against 5 fast ones: exit code %d:\n%s", code, out)
	}

	store := filepath.Join(t.TempDir(), "history.db")
	later := filepath.Join(t.TempDir(), "later")
	copyTree(t, fast[2], later, strings.NewReplacer(`"id": "`, `"id": "later-`, `"2026-11-25T`, `"2026-12-05T`))
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"history", "import", "--history", store, root, later}); code != exitOK {
		t.Fatalf("import: exit code %d:\n%s", code, out.String())
	}
	if code, out := check(later, "--against", "all", "--history", store); code != exitOK || !strings.Contains(out, "checked 1 run(s) against 20 baseline run(s)") {
		t.Errorf("a later fast run against all: exit code %d:\n%s", code, out)
	}
}

// copyTree copies the regular files and directories under from to to,
// run.json rewritten by edit.
func copyTree(t *testing.T, from, to string, edit *strings.Replacer) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if d.Name() == "run.json" {
			b = []byte(edit.Replace(string(b)))
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
