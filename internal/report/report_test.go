package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/testenv"
	"dbio/internal/workload"
	"dbio/internal/workload/as3ap"
	"dbio/internal/workload/sysbench"
	"dbio/internal/workload/tpcc"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// The results directories in testdata are real runs, trimmed to run.json,
// steps/*/summary.json and series.csv (all a report reads):
//
//	quick-ext4   dbio quick with its fio pass, on ext4 on a virtio disk
//	quick-tmpfs  the same on tmpfs (/dev/shm): no block device behind it
//	disk-mix     dbio disk --profile mix, block sizes 4k–256k at queue depths 1 and 8
//	disk-curve   dbio disk --profile curve, rates 20–120 % of the maximum
//	tpcc-postgres  dbio tpcc on a managed PostgreSQL: server processes and engine counters
//	tpcc-paced-sqlite  dbio tpcc --rate 400 on SQLite, users 1 and 4: open loop, the
//	             rate not achieved at 4 users
//	tpcc-goal-postgres  dbio tpcc --goal 'new_order:p99<=50ms' on PostgreSQL: a
//	             latency goal search's seven probes and its answer
//	tpcc-postgres-memory  dbio tpcc on PostgreSQL, 4 warehouses, --buffer-pool
//	             32MB --server-memory 192MB: the cap binds, the group refaults
//	tpcc-postgres-memory-1g  the same with --server-memory 1GB: the cap does
//	             not bind
//	disk-fleet-a, disk-fleet-b  dbio disk --profile four-corners --runtime 6s on
//	             three hosts of the namespaced test fleet (internal/testfleet)
//	             sharing this machine's disk, twice; they keep each host's fio
//	             IOPS and bandwidth logs too, which the fleet timelines read
//	tpcc-postgres-dbtime-tmpfs, tpcc-postgres-dbtime-capped  dbio tpcc on
//	             PostgreSQL, 1 warehouse, users 1,2,4, 2 s ramp-ups and 5 s
//	             steps with the database's time by class, on tmpfs and on a
//	             loop disk with --limit wiops=200, on a quiet machine
//	disk-diskspd-a, disk-diskspd-b  dbio disk --diskspd "-b8K -d4 -W1 -o4 -t2 -r
//	             -w30 -L -c256M -Sh", twice: one mixed point, with the latency
//	             histograms of its reads and writes (latency-*.hdr), which the
//	             DiskSpd latency table and the latency spectrum read
//	tpcc-sqlite-histograms  dbio tpcc on SQLite, users 1,2, 1 s ramp-ups and
//	             4 s steps, with each step's latency histograms per
//	             transaction type (latency-*.hdr), which the spectrum reads
//	tenants-fleet  dbio tpcc on PostgreSQL, 1 warehouse, 1 user, 8 s, as
//	             tenants on two test hosts, with each host's own run.json,
//	             series.csv and summaries under hosts/
//	capture-loop  dbio capture --target of a loop device's ext4 for 5 s while
//	             fio read and wrote 8 KiB at 400 IOPS with an fdatasync every 8
//	             writes; replay-loop its replay at the recorded pace on the
//	             same file system (it fell behind), replay-tmpfs-max its
//	             replay on tmpfs with --pace max (too short for fio to log a
//	             second: no series.csv)

var fixedClock = func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }

func testOptions() Options {
	workloads := workload.NewRegistry(tpcc.Definition(), sysbench.Definition(), as3ap.Definition())
	return Options{Now: fixedClock, Version: "v0.0.0-test", Titles: workloads.Title, SettingFlag: workloads.Flag}
}

func load(t testing.TB, names ...string) []*results.Loaded {
	t.Helper()
	var out []*results.Loaded
	for _, n := range names {
		l, err := results.Load(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// rendered gathers a report's files into three texts compared with the
// golden files: the HTML, the Markdown, and every CSV one after the other.
func rendered(t *testing.T, out Output) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	var err error
	if got["report.html"], err = os.ReadFile(out.HTML); err != nil {
		t.Fatal(err)
	}
	if got["summary.md"], err = os.ReadFile(out.Markdown); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out.CSVDir, "*.csv"))
	sort.Strings(files)
	var all bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString("==> " + filepath.Base(f) + " <==\n")
		all.Write(b)
	}
	got["tables.csv"] = all.Bytes()
	return got
}

func checkGolden(t *testing.T, name string, got map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "golden", name)
	for file, data := range got {
		path := filepath.Join(dir, file)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(want, data) {
			t.Errorf("%s differs from %s (run go test -update and review the diff):\n%s", file, path, firstDiff(want, data))
		}
	}
}

// firstDiff shows the first differing line, enough to find it in the file.
func firstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + clip(w) + "\n  got:  " + clip(g)
		}
	}
	return "(same lines, different bytes)"
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func TestRunReportsMatchGolden(t *testing.T) {
	cases := []struct {
		name string
		runs []string
	}{
		{"quick-ext4", []string{"quick-ext4"}},
		{"quick-tmpfs", []string{"quick-tmpfs"}},
		{"disk-mix", []string{"disk-mix"}},
		{"disk-curve", []string{"disk-curve"}},
		// A DiskSpd line with -w30: read, write and total rows, DiskSpd's
		// latency table and the spectrum from the point's histograms.
		{"disk-diskspd", []string{"disk-diskspd-a"}},
		{"tpcc-postgres", []string{"tpcc-postgres"}},
		// Transaction steps with their histograms: the latency spectrum.
		{"tpcc-sqlite-histograms", []string{"tpcc-sqlite-histograms"}},
		// PostgreSQL under a 192 MiB --server-memory cap with 4 warehouses
		// (about 400 MB): the memory group sampled at the cap, refaulting.
		{"tpcc-postgres-memory", []string{"tpcc-postgres-memory"}},
		{"tpcc-paced-sqlite", []string{"tpcc-paced-sqlite"}},
		{"tpcc-goal-postgres", []string{"tpcc-goal-postgres"}},
		// PostgreSQL with its database time by class, on a loop disk
		// capped at 200 write IOPS: storage-bound on log syncs at every
		// step, the cap bound in every second.
		{"tpcc-postgres-dbtime-capped", []string{"tpcc-postgres-dbtime-capped"}},
		{"two-runs", []string{"quick-tmpfs", "disk-curve"}},
		// Runs on several hosts: the fleet's line and each host's, second
		// by second.
		{"disk-fleet", []string{"disk-fleet-a"}},
		{"tenants-fleet", []string{"tenants-fleet"}},
		// A capture and a replay: requests and latency by direction,
		// second by second, and the replay's verdict.
		{"capture-loop", []string{"capture-loop"}},
		{"replay-loop", []string{"replay-loop"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := Output{HTML: filepath.Join(dir, "report.html"), Markdown: filepath.Join(dir, "summary.md"), CSVDir: filepath.Join(dir, "csv")}
			if err := WriteReport(out, load(t, c.runs...), testOptions()); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, c.name, rendered(t, out))
		})
	}
}

func TestComparisonsMatchGolden(t *testing.T) {
	cases := []struct {
		name  string
		runs  []string
		force bool
	}{
		{"compare-ext4-tmpfs", []string{"quick-ext4", "quick-tmpfs"}, false},
		{"compare-three", []string{"quick-ext4", "quick-tmpfs", "quick-ext4"}, false},
		{"compare-limited", []string{"quick-ext4", "quick-limited"}, false},
		{"compare-forced", []string{"disk-mix", "disk-curve"}, true},
		// PostgreSQL over 4 warehouses under a 192 MB cap that binds, then
		// a 1 GB cap that does not: the memory groups side by side, the
		// refaults compared, and the database-seen waits of both.
		{"compare-memory", []string{"tpcc-postgres-memory", "tpcc-postgres-memory-1g"}, false},
		// PostgreSQL on tmpfs (CPU-bound on the server's CPU from 2 users
		// on), then capped at 200 write IOPS (storage-bound on log syncs):
		// the comparison opens with the change of bottleneck and tables
		// the database time by class.
		{"compare-dbtime", []string{"tpcc-postgres-dbtime-tmpfs", "tpcc-postgres-dbtime-capped"}, false},
		// Two fleets of three hosts: the fleets' rows, then each host's.
		{"compare-fleet", []string{"disk-fleet-a", "disk-fleet-b"}, false},
		// The same DiskSpd line twice: the point's spectra overlaid.
		{"compare-diskspd", []string{"disk-diskspd-a", "disk-diskspd-b"}, false},
		// A capture and its replays side by side: the fidelity check on the
		// source's own storage, and the headroom on tmpfs.
		{"compare-replays", []string{"capture-loop", "replay-loop", "replay-tmpfs-max"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := Output{HTML: filepath.Join(dir, "compare.html"), Markdown: filepath.Join(dir, "compare.md"), CSVDir: filepath.Join(dir, "compare-csv")}
			opts := testOptions()
			opts.Force = c.force
			if _, err := WriteComparison(out, load(t, c.runs...), opts); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, c.name, rendered(t, out))
		})
	}
}

// A fleet's figures are its hosts' summed: a fleet run set against a run
// on one machine is refused, either way round, naming both and the fix.
func TestComparisonRefusesAFleetAgainstOneMachine(t *testing.T) {
	for _, c := range [][]string{{"disk-fleet-a", "disk-mix"}, {"disk-mix", "disk-fleet-a"}} {
		err := CheckComparable(load(t, c...), testOptions())
		var nc *NotComparableError
		if !errors.As(err, &nc) {
			t.Fatalf("%v: CheckComparable = %v, want a NotComparableError", c, err)
		}
		for _, want := range []string{"on 3 hosts at once (h1, h2, h3)", "ran on one machine", "compare a fleet run with another fleet run", "(--force compares them anyway)"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: error %q\ndoes not say %q", c, err, want)
			}
		}
		// The fleet's reason names its own fix; the advice for runs of one
		// kind that differ would contradict it.
		if strings.Contains(err.Error(), "same workload, scale and user sequence") {
			t.Errorf("%v: error %q\nadds the advice for runs that differ in workload, scale or users", c, err)
		}
	}
	if err := CheckComparable(load(t, "disk-fleet-a", "disk-fleet-b"), testOptions()); err != nil {
		t.Errorf("two fleets of the same hosts: %v", err)
	}
}

// The refusal's advice follows the reasons it is for: comparing runs of
// the same workload, scale and users after differences, nothing but
// --force after a fleet's reason, which names its own fix.
func TestNotComparableErrorAdvice(t *testing.T) {
	const differ, fleet = "A ran TPC-C at 10 warehouses but B at 20", "A ran on 2 hosts at once (h1, h2) but B ran on one machine: compare a fleet run with another fleet run"
	cases := []struct {
		name string
		err  NotComparableError
		want string
	}{
		{"differences", NotComparableError{Reasons: []string{differ}},
			"the runs are not comparable: " + differ + " (compare runs of the same workload, scale and user sequence, or pass --force to compare them anyway)"},
		{"a fleet", NotComparableError{Fleets: []string{fleet}},
			"the runs are not comparable: " + fleet + " (--force compares them anyway)"},
		{"both", NotComparableError{Reasons: []string{differ}, Fleets: []string{fleet}},
			"the runs are not comparable: " + differ + " (compare runs of the same workload, scale and user sequence); " + fleet + " (--force compares them anyway)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.err.Error(); got != c.want {
				t.Errorf("error\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

func TestComparisonRefusesRunsThatDiffer(t *testing.T) {
	base := load(t, "quick-ext4")[0]
	mutate := func(change func(l *results.Loaded, cfg *results.RunConfig)) *results.Loaded {
		l := *base
		l.Steps = append([]results.Step(nil), base.Steps...)
		change(&l, &l.Run.Config)
		return &l
	}
	cases := []struct {
		name string
		b    *results.Loaded
		want []string
	}{
		{"workload", load(t, "disk-mix")[0], []string{"A (sqlite-ext4) measured TPC-C and fio but B (mix-ext4) measured fio"}},
		{"warehouses", mutate(func(_ *results.Loaded, cfg *results.RunConfig) {
			cfg.Settings = slices.Clone(cfg.Settings)
			for i, s := range cfg.Settings {
				if s.Name == "warehouses" {
					cfg.Settings[i].Value = json.Number("4")
				}
			}
		}), []string{"A (sqlite-ext4) ran TPC-C at 1 warehouse but B (sqlite-ext4 #2) at 4 warehouses"}},
		{"users", mutate(func(_ *results.Loaded, cfg *results.RunConfig) { cfg.Users = []int{8, 16} }),
			[]string{"A (sqlite-ext4)'s TPC-C user sequence is 1,2,4 but B (sqlite-ext4 #2)'s is 8,16, with no user count in common"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckComparable([]*results.Loaded{base, c.b}, testOptions())
			var nc *NotComparableError
			if !errors.As(err, &nc) {
				t.Fatalf("CheckComparable = %v, want a NotComparableError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not say %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "--force") {
				t.Errorf("error %q does not name the way out (--force)", err)
			}
			dir := t.TempDir()
			_, err = WriteComparison(OutputAt(filepath.Join(dir, "c.html")), []*results.Loaded{base, c.b}, testOptions())
			if !errors.As(err, &nc) {
				t.Fatalf("WriteComparison = %v, want a NotComparableError", err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a refused comparison wrote %d files", len(entries))
			}
		})
	}
}

// Runs that share some steps are compared on those, and the headlines say
// what was left out.
func TestComparisonComparesTheStepsInCommon(t *testing.T) {
	base := load(t, "quick-ext4")[0]
	fewerUsers := *base
	fewerUsers.Run.Config.Users = []int{1, 2}
	fewerPoints := *base
	fewerPoints.Steps = base.Steps[1:]
	cases := []struct {
		name string
		b    *results.Loaded
		want string
	}{
		{"users", &fewerUsers, "only 1,2 users are compared (left out: 4 of A (sqlite-ext4))"},
		{"fio points", &fewerPoints, "only the 5 points in common are compared (left out: 4k-randread of A (sqlite-ext4))"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			headlines, err := WriteComparison(OutputAt(filepath.Join(t.TempDir(), "c.html")), []*results.Loaded{base, c.b}, testOptions())
			if err != nil {
				t.Fatalf("WriteComparison refused runs with steps in common: %v", err)
			}
			if text := strings.Join(headlines, "\n"); !strings.Contains(text, c.want) {
				t.Errorf("headlines\n%s\ndo not say %q", text, c.want)
			}
		})
	}
}

func TestOutputNeverReplacesWhatDbioDidNotWrite(t *testing.T) {
	runs := load(t, "quick-tmpfs")
	dir := t.TempDir()
	out := OutputAt(filepath.Join(dir, "r.html"))
	if out.Markdown != filepath.Join(dir, "r.md") || out.CSVDir != filepath.Join(dir, "r-csv") {
		t.Fatalf("OutputAt = %+v", out)
	}
	if err := WriteReport(out, runs, testOptions()); err != nil {
		t.Fatal(err)
	}
	// A second rendering replaces dbio's own files and drops CSVs it no longer writes.
	stale := filepath.Join(out.CSVDir, "gone.csv")
	if err := os.WriteFile(stale, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(out, runs, testOptions()); err != nil {
		t.Fatalf("rewriting dbio's own report: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale CSV kept: %v", err)
	}
	foreign := []struct {
		name   string
		create func(o Output) error
		want   string
	}{
		{"html", func(o Output) error { return os.WriteFile(o.HTML, []byte("<html>mine</html>"), 0o644) }, "was not written by dbio"},
		{"markdown", func(o Output) error { return os.WriteFile(o.Markdown, []byte("# my notes\n"), 0o644) }, "was not written by dbio"},
		{"csv dir", func(o Output) error {
			if err := os.MkdirAll(o.CSVDir, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(o.CSVDir, "data.csv"), []byte("mine\n"), 0o644)
		}, "not created by dbio"},
	}
	for _, f := range foreign {
		t.Run(f.name, func(t *testing.T) {
			o := OutputAt(filepath.Join(t.TempDir(), "x.html"))
			if err := f.create(o); err != nil {
				t.Fatal(err)
			}
			err := WriteReport(o, runs, testOptions())
			if err == nil || !strings.Contains(err.Error(), f.want) || !strings.Contains(err.Error(), "choose another output path") {
				t.Fatalf("WriteReport over a foreign %s = %v", f.name, err)
			}
			if _, err := os.Stat(o.HTML); f.name != "html" && err == nil {
				t.Error("the report was written although one of its files was refused")
			}
		})
	}
}

func TestGoldenHTMLHasUniqueIDs(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("testdata", "golden", "*", "report.html"))
	testenv.Require(t, len(pages) > 0, "golden report pages in testdata/golden", "write them with: go test ./internal/report -update")
	id := regexp.MustCompile(`\sid="([^"]+)"`)
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, m := range id.FindAllSubmatch(b, -1) {
			if seen[string(m[1])] {
				t.Errorf("%s: id %q used twice", p, m[1])
			}
			seen[string(m[1])] = true
		}
	}
}

func TestWriteRunReportWritesIntoTheRun(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"run.json", "series.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", "quick-tmpfs", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps, _ := filepath.Glob(filepath.Join("testdata", "quick-tmpfs", "steps", "*", "summary.json"))
	for _, s := range steps {
		step := filepath.Base(filepath.Dir(s))
		if err := os.MkdirAll(filepath.Join(dir, "steps", step), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(s)
		if err := os.WriteFile(filepath.Join(dir, "steps", step, "summary.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path, err := WriteRunReport(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "report.html") {
		t.Errorf("path = %s", path)
	}
	for _, f := range []string{"report.html", "summary.md", "csv/tpcc-steps.csv", "csv/" + ".dbio-owned"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// An interrupted or crashed run leaves a partial directory; its report must
// still render, say what happened, and never print NaN.
func TestReportsOfUnfinishedRuns(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		build func(t *testing.T, d *results.Dir)
		want  []string
	}{
		{"only run.json", func(t *testing.T, d *results.Dir) {}, []string{"still running", "No step finished with figures."}},
		{"abandoned", func(t *testing.T, d *results.Dir) {
			// As a dbio older than the lock leaves it: running, and no lock.
			if err := os.Remove(filepath.Join(d.Path, ".dbio-run.lock")); err != nil {
				t.Fatal(err)
			}
		}, []string{"The run was abandoned: the dbio that wrote it ended without finishing the run", "No step finished with figures."}},
		{"interrupted mixed run", func(t *testing.T, d *results.Dir) {
			fioDetail := &results.FioPoint{Profile: "four-corners", FioPlan: results.FioPlan{Name: "4k-randread", Series: "4k-randread", RW: "randread", BS: 4096, IODepth: 32, Jobs: 1, Label: "t"},
				Status: results.StatusFailed}
			steps := []results.Step{
				{Index: 0, Name: "4k-randread", Kind: "fio", Started: start, Ended: start.Add(time.Second), Status: results.StatusFailed, Error: "fio was killed by signal 9", Fio: fioDetail},
				{Index: 1, Name: "users-1", Kind: "tpcc", Users: 1, Started: start.Add(2 * time.Second), Ended: start.Add(5 * time.Second), RampUpS: 1,
					Status: results.StatusInterrupted, Figures: []results.Figure{{Name: "tpm", Value: 600, Unit: "tx/min"}}, Total: &metrics.TxSummary{Name: "all"}},
				{Index: 2, Name: "backup-1", Kind: "backup", Started: start.Add(6 * time.Second), Ended: start.Add(9 * time.Second), Status: results.StatusCompleted,
					Figures: []results.Figure{{Name: "mb_s", Value: 593, Unit: "MB/s"}}},
			}
			for _, s := range steps {
				if err := d.WriteStep(s, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.AppendSeries(results.SeriesRow{Time: start.Add(3 * time.Second), Step: "users-1", Phase: "measure", Values: []results.Sample{{Name: "tpm", Value: 600}}}); err != nil {
				t.Fatal(err)
			}
			if err := d.Finish(results.StatusInterrupted, errors.New("interrupted by the user"), start.Add(10*time.Second)); err != nil {
				t.Fatal(err)
			}
		}, []string{"The run ended interrupted: interrupted by the user", "fio was killed by signal 9", "Other steps", "593"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := results.Create(t.TempDir(), "partial", results.Run{Kind: "quick", Config: results.RunConfig{Users: []int{1}}}, start)
			if err != nil {
				t.Fatal(err)
			}
			c.build(t, d)
			l, err := results.Load(d.Path)
			if err != nil {
				t.Fatal(err)
			}
			out := OutputIn(d.Path)
			if err := WriteReport(out, []*results.Loaded{l}, testOptions()); err != nil {
				t.Fatal(err)
			}
			page, err := os.ReadFile(out.HTML)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(string(page), w) {
					t.Errorf("report lacks %q", w)
				}
			}
			if regexp.MustCompile(`\bNaN\b|[+-]Inf\b`).Match(page) {
				t.Error("report prints NaN or Inf")
			}
		})
	}
}

// A point that asked fio for steady-state detection (the precondition
// profile) records its criterion and fio's verdict; its report shows both.
func TestSteadyStatePointReports(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	d, err := results.Create(t.TempDir(), "precondition", results.Run{Kind: "disk", Config: results.RunConfig{Disk: &results.DiskConfig{Profile: "precondition"}}}, start)
	if err != nil {
		t.Fatal(err)
	}
	p := &results.FioPoint{FioPlan: results.FioPlan{Name: "precondition", Series: "randwrite", RW: "randwrite", BS: 4096, IODepth: 32, Jobs: 1,
		RuntimeS: 600, SteadyState: "iops_slope:0.3%", SteadyWindowS: 60, Label: "nvme"}, Profile: "precondition", Status: results.StatusCompleted,
		FioDirections: results.FioDirections{Total: &results.FioDirection{IOPS: 52000, BytesPerSec: 213e6, Completion: results.FioLatency{MeanUS: 600}}},
		ElapsedS:      184, Steady: &results.FioSteadyState{Criterion: "iops_slope:0.300000%", WindowS: 60, Attained: true, Value: "-0.12%", WindowIOPSMean: 51800}}
	step := results.Step{Name: "precondition", Kind: results.KindFio, Started: start, Ended: start.Add(184 * time.Second), Status: results.StatusCompleted,
		Figures: []results.Figure{{Name: results.FigureIOPS, Value: 52000}, {Name: results.FigureMBPerSec, Value: 213}, {Name: results.FigureLatMeanUS, Value: 600}}, Fio: p}
	if err := d.WriteStep(step, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(results.StatusCompleted, nil, start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	l, err := results.Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	out := OutputIn(d.Path)
	if err := WriteReport(out, []*results.Loaded{l}, testOptions()); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(out.HTML)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Steady state", "iops_slope:0.300000%", "steady after 184 s (-0.12%)", "Steady state on precondition: steady after 184 s (-0.12%)."} {
		if !strings.Contains(string(page), w) {
			t.Errorf("report lacks %q", w)
		}
	}
}

// A run whose ramp-ups were to end at steady state: the report marks the
// second on the per-second charts, tabulates each step's ramp-up, says it
// in a finding and in the terminal, and shows the load average beside the
// rest of the run's background.
func TestSteadyRampUpReports(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	d, err := results.Create(t.TempDir(), "steady", results.Run{Kind: "tpcc", Config: results.RunConfig{Users: []int{1, 2}, RampUpS: 60, Steady: &results.SteadyConfig{Until: "nopm_slope:0.5%"}}}, start)
	if err != nil {
		t.Fatal(err)
	}
	fig := 0.31
	tel := func(load float64) *results.TelemetrySummary {
		return &results.TelemetrySummary{Samples: 10, CPUs: 2, Metrics: map[string]results.TelemetryStat{
			"cpu_user_pct": {Mean: 40, Samples: 10}, "cpu_system_pct": {Mean: 10, Samples: 10}, "proc_dbio_cpu_pct": {Mean: 45, Samples: 10},
			"cpu_steal_pct": {Mean: 0.5, Samples: 10}, "load_1m": {Mean: load, Samples: 10}}}
	}
	steps := []results.Step{
		{Index: 0, Name: "users-1", Kind: "tpcc", Users: 1, Started: start, Ended: start.Add(34 * time.Second), RampUpS: 24, MeasureS: 10,
			Status: results.StatusCompleted, Total: &metrics.TxSummary{Name: "all"}, Telemetry: tel(1.5),
			Figures: []results.Figure{{Name: "tpm", Value: 600, Unit: "tx/min"}, {Name: "nopm", Value: 270, Unit: "new-orders/min"}},
			Warmup:  &results.SteadyWarmup{Criterion: "nopm_slope:0.5%", WindowS: 20, LimitS: 60, Reached: true, AtS: 24, Windows: 5, Mean: 268, Figure: &fig}},
		{Index: 1, Name: "users-2", Kind: "tpcc", Users: 2, Started: start.Add(35 * time.Second), Ended: start.Add(105 * time.Second), RampUpS: 60, MeasureS: 10,
			Status: results.StatusCompleted, Total: &metrics.TxSummary{Name: "all"}, Telemetry: tel(2.5),
			Figures: []results.Figure{{Name: "tpm", Value: 1100, Unit: "tx/min"}, {Name: "nopm", Value: 500, Unit: "new-orders/min"}},
			Warmup:  &results.SteadyWarmup{Criterion: "nopm_slope:0.5%", WindowS: 20, LimitS: 60, Windows: 41, Mean: 480}},
	}
	for _, s := range steps {
		if err := d.WriteStep(s, nil); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= int(s.Ended.Sub(s.Started).Seconds()); i++ {
			phase := "rampup"
			if float64(i) > s.RampUpS {
				phase = "measure"
			}
			if err := d.AppendSeries(results.SeriesRow{Time: s.Started.Add(time.Duration(i) * time.Second), Step: s.Name, Phase: phase,
				Values: []results.Sample{{Name: "tpm", Value: float64(500 + i)}, {Name: "nopm", Value: float64(200 + i)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Finish(results.StatusCompleted, nil, start.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	l, err := results.Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	out := OutputIn(d.Path)
	if err := WriteReport(out, []*results.Loaded{l}, testOptions()); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(out.HTML)
	if err != nil {
		t.Fatal(err)
	}
	finding := "TPC-C's ramp-ups were to end once throughput was steady (nopm_slope:0.5% over 20 s): 1 of 2 steps got there, after 24 s. " +
		"The step at 2 users was measured after the longest ramp-up (60 s) without being steady: its figures may still include the warm-up's drift."
	for _, w := range []string{
		`<line class="mark" data-mark="steady"`, "users-1: steady after 24 s (nopm_slope:0.5% over 20 s)", "Ramp-up until steady state",
		"not steady", "0.31", finding,
		"Background during the database steps", "load average (1 min)", "2.00 on 2 CPUs",
	} {
		if !strings.Contains(html.UnescapeString(string(page)), w) {
			t.Errorf("report lacks %q", w)
		}
	}
	// The series hold throughput alone, so one chart: one mark on it, for
	// the step that got there (the other has none).
	if n := strings.Count(string(page), `data-mark="steady"`); n != 1 {
		t.Errorf("%d marks, want 1", n)
	}
	var b bytes.Buffer
	if err := Text(&b, l, testOptions()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "warm-up: "+finding) {
		t.Errorf("terminal summary lacks the warm-up:\n%s", b.String())
	}
}

// quick's two halves are joined in the terminal as in the report: what the
// workload asked of the device against what fio measured it can do.
func TestTextJoinsWorkloadDemandWithFioCapacity(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, load(t, "quick-ext4")[0], testOptions()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"TPC-C drove 15,244 writes/s on vda at 1 user: 12 % of the 127,110 IOPS of fio's 4k-randwrite point.",
		"TPC-C drove 58,819 reads/s on vda at 4 users: 48 % of the 122,129 IOPS of fio's 4k-randread point.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("terminal summary does not say %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Text(&b, load(t, "quick-tmpfs")[0], testOptions()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), " drove ") {
		t.Errorf("a run without a block device claims a device demand:\n%s", b.String())
	}
}

// The terminal's fio table is for people: words for headers, latencies in
// ms, separators, and no column a point did not measure.
func TestTextFioTableIsReadable(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, load(t, "quick-ext4")[0], testOptions()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	head := regexp.MustCompile(`(?m)^\s*fio point\s+IOPS\s+MB/s\s+mean ms\s+p50 ms\s+p99 ms\s+p99\.9 ms\s+max ms\s+status\s*$`)
	if !head.MatchString(out) {
		t.Errorf("no readable fio header:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^\s*4k-randread\s+122,129\s+500\s+1\.04\s`).MatchString(out) {
		t.Errorf("4k-randread row not in IOPS with separators and ms:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "_us") || strings.Contains(line, "_pct") {
			t.Errorf("snake_case figure name on screen: %q", line)
		}
		if n := len([]rune(line)); n > 120 {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
}

// A mixed point is split into reads, writes and both in the terminal, each
// percentile at most the direction's maximum; a DiskSpd line also gets
// DiskSpd's latency table, every rung from the minimum to the maximum.
func TestTextSplitsMixedPoints(t *testing.T) {
	l := load(t, "disk-diskspd-a")[0]
	var b bytes.Buffer
	if err := Text(&b, l, testOptions()); err != nil {
		t.Fatal(err)
	}
	if err := DiskSpdText(&b, l); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`(?m)^\s*fio point\s+I/O\s+IOPS\s+MB/s\s+mean\s+p50\s+p90\s+p95\s+p99\s+p99\.9\s+p99\.99\s+max$`,
		`(?m)^\s*randrw70-8k-t2-q4\s+read\s+8,051\s+66\.0\s+0\.420\s+0\.228\s+0\.481\s+0\.995\s+4\.29\s+18\.7\s+46\.4\s+70\.7$`,
		`(?m)^\s+write\s+3,426\s+28\.1\s+1\.28\s`,
		`(?m)^\s+total\s+11,476\s+94\.0\s+0\.677\s`,
		`(?m)^\s*%-ile\s+read \(ms\)\s+write \(ms\)\s+total \(ms\)$`,
		`(?m)^\s*min\s+0\.000\s+0\.000\s+0\.000$`,
		`(?m)^\s*99th\s+4\.295\s+14\.615\s+7\.835$`,
		`(?m)^\s*8-nines\s+70\.705\s+72\.556\s+72\.556$`,
		`(?m)^\s*max\s+70\.705\s+72\.556\s+72\.556$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s:\n%s", want, out)
		}
	}
	// Another run's points are not split, and it gets no DiskSpd table.
	b.Reset()
	other := load(t, "quick-ext4")[0]
	if err := Text(&b, other, testOptions()); err != nil {
		t.Fatal(err)
	}
	if err := DiskSpdText(&b, other); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "mixed points") || strings.Contains(b.String(), "%-ile") {
		t.Errorf("a run without mixed points or a DiskSpd line got their tables:\n%s", b.String())
	}
}

// A run under a storage-class limit names the limit wherever it names the
// storage: the terminal, the report's subtitle and facts, a comparison's
// header and runs table. (testdata/quick-limited is quick-ext4's recording
// with a limit added to its targets: a fixture for the wording only.)
func TestLimitIsNamedWithTheStorage(t *testing.T) {
	const limit = "capped at 500 read IOPS / 300 write IOPS (cgroup v1-blkio)"
	var term bytes.Buffer
	if err := Text(&term, load(t, "quick-limited")[0], testOptions()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(term.String(), "ext4 on vda, "+limit) {
		t.Errorf("terminal target line does not name the limit:\n%s", term.String())
	}
	doc := runDocument(viewsOf(load(t, "quick-limited"), testOptions()), testOptions())
	if !strings.Contains(doc.Subtitle, "ext4 on vda (rotational), "+limit) {
		t.Errorf("subtitle %q does not name the limit", doc.Subtitle)
	}
	named := 0
	for _, f := range doc.Facts {
		if strings.Contains(f.Value, limit) {
			named++
		}
	}
	if named == 0 {
		t.Errorf("no fact names the limit: %+v", doc.Facts)
	}
	views := viewsOf(load(t, "quick-ext4", "quick-limited"), testOptions())
	refusal, warnings := comparability(views)
	cmp, _ := compareDocument(views, refusal.Reasons(), warnings, testOptions())
	if !strings.Contains(cmp.Subtitle, "A: ext4 on vda (rotational); B: ext4 on vda (rotational), "+limit) {
		t.Errorf("comparison subtitle %q does not tell the runs' storage apart", cmp.Subtitle)
	}
}
