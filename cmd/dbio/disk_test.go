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

	"dbio/internal/execx"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/testenv"
)

func TestDiskBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"disk", "--target", dir, "--profile", "fast"}, []string{`unknown fio profile "fast": use one of crystaldiskmark, curve, four-corners, job, mix, precondition, snia-rounds, sqlio, sqlserver`}},
		{[]string{"disk", "--target", dir, "--ss-ramp", "30s"}, []string{"--ss-ramp applies with --steady-state"}},
		{[]string{"disk", "--target", dir, "--profile", "snia-rounds", "--steady-state=tps:5%"}, []string{"the rounds are judged on fio's iops or bw"}},
		{[]string{"disk", "--target", dir, "--size", "lots"}, []string{`--size: malformed size "lots"`}},
		{[]string{"disk", "--target", dir, "--profile", "curve", "--rates", "10,half"}, []string{`--rates "half"`}},
		{[]string{"disk", "--target", dir, "--profile", "sqlio", "--bs", "8k,1000", "--iodepth", "1,x"}, []string{"--bs 1000 B", `--iodepth "x"`}},
		{[]string{"disk", "--target", dir, "--bs", "8k"}, []string{"--bs does not apply to the four-corners profile"}},
		{[]string{"disk", "--target", dir, "--runtime", "soon"}, []string{"--runtime soon: give a duration with its unit"}},
		{[]string{"disk"}, []string{"no target: pass --target DIR"}},
		{[]string{"disk", "--target", dir, "--repeat", "0"}, []string{"--repeat 0: run at least once"}},
		{[]string{"disk", "--target", dir, "--diskspd", "-b8K -Z1G -r", "--iodepth", "4"},
			[]string{"DiskSpd switch -Z1G: not a DiskSpd switch dbio translates", "--iodepth: the --diskspd line sets the job"}},
		{[]string{"disk", "--target", dir, "--sqlio", "-kR -f64"}, []string{"SQLIO switch -f64: a stripe factor"}},
		{[]string{"disk", "--target", dir, "--sqlio", "-kR -frandom", "--diskspd", "-r"}, []string{"--diskspd and --sqlio: give one command line"}},
		{[]string{"disk", "--host", "h1=root@192.0.2.1", "--target", "h2:/srv/data", "--size", "1G"}, []string{`target "h2:/srv/data" is on host h2, which is not named: name it with --host h2=`}},
		{[]string{"disk", "--host", "h1=root@192.0.2.1", "--target", "h1:srv/data", "--size", "1G"}, []string{"a target on a host is NAME:/absolute/path"}},
		{[]string{"disk", "--host", "h1", "--target", dir}, []string{`--host "h1": give NAME=DESTINATION`}},
		{[]string{"disk", "--host", "h1=-oProxyCommand=x", "--target", "h1:/srv", "--size", "1G"}, []string{"without spaces, quotes or a leading -"}},
		{[]string{"disk", "--host", "h1=a", "--host", "h1=b", "--target", "h1:/srv", "--size", "1G"}, []string{"host h1 is named twice"}},
		{[]string{"disk", "--host", "h1=a", "--target", "h1:/srv", "--target", dir, "--size", "1G"}, []string{"is on this machine while the others are on hosts"}},
		{[]string{"disk", "--target", dir, "--fio-port", "9000"}, []string{"--fio-port: it sets the hosts' fio servers, and no --host is given"}},
		{[]string{"disk", "--host", "h1=a", "--fio-server", "maybe", "--target", "h1:/srv", "--size", "1G"}, []string{`--fio-server "maybe"`}},
		{[]string{"disk", "--host", "h1=a", "--target", "h1:/srv", "--size", "1G", "--profile", "precondition"}, []string{"each host would stop at its own"}},
		{[]string{"disk", "--host", "h1=a", "--ssh-config", filepath.Join(dir, "missing"), "--target", "h1:/srv", "--size", "1G"},
			[]string{`--ssh-config "` + filepath.Join(dir, "missing") + `"`, "give the path of an ssh_config file"}},
		{[]string{"disk", "--host", "h1=a", "--ssh-config", dir, "--target", "h1:/srv", "--size", "1G"}, []string{"is a directory: give the path of an ssh_config file"}},
	} {
		t.Run(strings.Join(tc.args[min(3, len(tc.args)):], " "), func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), testApp(&out), tc.args); code != exitUsage {
				t.Errorf("exit code %d, want %d:\n%s", code, exitUsage, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output %q does not say %q", out.String(), w)
				}
			}
		})
	}
}

// TestDiskPrecisionBadInput refuses a precision bound a fio point cannot
// meet with exit 2, before the results directory or the target's working
// file is written.
func TestDiskPrecisionBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--precision", "2"}, `"2" is not a percentage`},
		{[]string{"--precision", "iops:0%"}, "outside (0%, 100%)"},
		{[]string{"--precision", "iops:2%,iops:3%"}, "iops is given twice"},
		{[]string{"--precision", "nopm:2%"}, "a fio point records no per-second nopm"},
		{[]string{"--precision", "new_order:p99:10%"}, "a fio point has no transaction types"},
		{[]string{"--precision", "p100:10%"}, "records no per-second p100"},
		{[]string{"--precision-min", "30s"}, "--precision-min: applies only with --precision"},
		{[]string{"--precision", "2%", "--precision-min", "5s"}, "--precision-min 5s: use whole seconds, at least 10s"},
		{[]string{"--precision", "2%", "--runtime", "20s"}, "--precision-min 30s is longer than each point's runtime (20s)"},
		{[]string{"--precision", "2%", "--steady-state"}, "--precision and --steady-state"},
		{[]string{"--precision", "2%", "--profile", "snia-rounds"}, "the snia-rounds profile's rounds are judged steady"},
		{[]string{"--precision", "2%", "--profile", "precondition"}, "pass(es) over the file"},
		{[]string{"--precision", "lat_p99_us:1%", "--diskspd", "-b8K -o8 -t1 -r -d5 -W1"}, "longer than each point's runtime (5s)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			target, base := t.TempDir(), filepath.Join(t.TempDir(), "results")
			args := append([]string{"disk", "--target", target, "--profile", "job", "--results", base}, tc.args...)
			if slices.Contains(tc.args, "--profile") || slices.Contains(tc.args, "--diskspd") {
				args = append([]string{"disk", "--target", target, "--results", base}, tc.args...)
			}
			var out bytes.Buffer
			if code := run(context.Background(), testApp(&out), args); code != exitUsage {
				t.Errorf("exit code %d, want %d:\n%s", code, exitUsage, out.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("output %q does not say %q", out.String(), tc.want)
			}
			if _, err := os.Stat(base); err == nil {
				t.Errorf("a results directory was created for bad input")
			}
			if entries, _ := os.ReadDir(target); len(entries) > 0 {
				t.Errorf("the target was written for bad input: %v", entries)
			}
		})
	}
}

func TestDiskDryRunTouchesNothing(t *testing.T) {
	target := filepath.Join(t.TempDir(), "nvme")
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"disk", "--target", target, "--profile", "curve", "--rates", "50,100", "--dry-run"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{"profile curve: 3 point(s), about 3m15s of fio time", "randread-4k-max", "limited to 50% of the IOPS randread-4k-max reaches"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run does not say %q:\n%s", want, out.String())
		}
	}
	// It says the working file's size and why, and the time to lay it out.
	if !regexp.MustCompile(`, plus about \S+ laying out: about \S+ in all\n  ` + regexp.QuoteMeta(target) +
		`: working file [0-9.]+ [MG]iB: .+; laying it out: about \S+ at [0-9]+ MB/s`).MatchString(out.String()) {
		t.Errorf("dry run does not size the working file and its layout:\n%s", out.String())
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("dry run created the target: %v", err)
	}
}

func TestDiskWithoutFio(t *testing.T) {
	var out bytes.Buffer
	app := testApp(&out)
	app.Exec = &execx.Fake{}
	base := t.TempDir()
	code := run(context.Background(), app, []string{"disk", "--target", t.TempDir(), "--results", base})
	if code != exitFailure || !strings.Contains(out.String(), "fio is not installed: install it with 'apt-get install -y fio'") {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("a results directory was created without fio: %v", entries)
	}
}

// The SNIA-style profile from the command line: purge, fill, and rounds
// that end once steady (any window of rounds is within 1000 % of its mean,
// so after exactly five), with the rounds in the report.
func TestDiskRoundsEndToEnd(t *testing.T) {
	t.Parallel()
	dir := fioDir(t, "dbio-rounds-cmd-")
	base := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"disk", "--target", dir, "--profile", "snia-rounds", "--steady-state=iops:1000%",
		"--jobs", "1", "--runtime", "1s", "--size", "16M", "--results", base, "--name", "rounds"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{"purged the working file", "round 5: steady (iops:1000% over rounds 1-5", "6 of at most 26 point(s) finished"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(base, "*-rounds"))
	if len(dirs) != 1 {
		t.Fatalf("results directories %v", dirs)
	}
	html, err := report.WriteRunReport(dirs[0], reportOptions(testApp(&out)))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Rounds until steady", "IOPS per round", "steady after 5 rounds (iops:1000% over the last 5)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestDiskEndToEnd(t *testing.T) {
	shm := fioDir(t, "dbio-disk-cmd-")
	base := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"disk", "--target", shm, "--profile", "sqlio", "--bs", "8k", "--iodepth", "4",
		"--rw", "randread", "--runtime", "1s", "--ramp-time", "0s", "--size", "64M", "--results", base, "--name", "e2e"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(base, "*-e2e"))
	if len(dirs) != 1 {
		t.Fatalf("results directories %v", dirs)
	}
	l, err := results.Load(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Kind != "disk" || l.Run.Status != results.StatusCompleted || len(l.Steps) != 1 || l.Steps[0].Kind != "fio" {
		t.Errorf("run %s %s with %d steps", l.Run.Kind, l.Run.Status, len(l.Steps))
	}
	if !strings.Contains(out.String(), "best within mean latency ≤ 20ms") || !strings.Contains(out.String(), "1 of 1 point(s) finished") {
		t.Errorf("output:\n%s", out.String())
	}
	// A single run writes its report, as a repeated one does per repeat.
	page := filepath.Join(dirs[0], "report.html")
	if _, err := os.Stat(page); err != nil || !strings.Contains(out.String(), "report:  "+page) {
		t.Errorf("no report.html announced and written (%v):\n%s", err, out.String())
	}
}

// dbio disk --repeat N writes a repeat set of disk runs whose report gives
// every fio figure over the repeats, and dbio compare reads two such sets
// point by point, each difference with its verdict.
func TestDiskRepeatAndCompareSets(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	shm := fioDir(t, "dbio-disk-repeat-")
	base := t.TempDir()
	disk := func(name string) string {
		t.Helper()
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), []string{"disk", "--target", shm, "--profile", "sqlio", "--bs", "8k", "--iodepth", "1,4",
			"--rw", "randread", "--runtime", "1s", "--ramp-time", "0s", "--size", "32M", "--results", base, "--name", name, "--repeat", "4"})
		if code != exitOK {
			t.Fatalf("exit %d:\n%s", code, out.String())
		}
		for _, want := range []string{"=== repeat 4 of 4: " + name + " ===", "4 of 4 repeats completed", "IOPS", "repeat set: "} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
		sets, _ := filepath.Glob(filepath.Join(base, "*-"+name, results.RepeatSetFile))
		if len(sets) != 1 {
			t.Fatalf("repeat sets %v", sets)
		}
		return filepath.Dir(sets[0])
	}
	a := disk("shm-a")
	set, runs, err := results.LoadRepeatSet(a)
	if err != nil {
		t.Fatal(err)
	}
	if set.Kind != "disk" || set.Status != results.StatusCompleted || len(runs) != 4 {
		t.Fatalf("manifest %+v with %d runs", set, len(runs))
	}
	for _, r := range runs {
		if r.Run.Kind != "disk" || len(r.Steps) != 2 {
			t.Errorf("%s: %s with %d steps, want a disk run of 2 points", r.Path, r.Run.Kind, len(r.Steps))
		}
	}
	summary, err := os.ReadFile(filepath.Join(a, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Each figure of each point as median, interval (or what it needs) and spread.
	for _, want := range []string{"IOPS", "MB/s", "mean latency", "p99 latency", "needs 6 repeats", "spread"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("the set's summary lacks %q:\n%s", want, summary)
		}
	}
	b := disk("shm-b")
	var out bytes.Buffer
	html := filepath.Join(t.TempDir(), "c.html")
	if code := run(context.Background(), testApp(&out), []string{"compare", a, b, "-o", html}); code != exitOK {
		t.Fatalf("compare: exit %d:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "against A (shm-a, 4 repeats), each repeat's average over 2 points") {
		t.Errorf("compare's findings:\n%s", out.String())
	}
	md, err := os.ReadFile(strings.TrimSuffix(html, ".html") + ".md")
	if err != nil {
		t.Fatal(err)
	}
	verdicts := 0
	for _, line := range strings.Split(string(md), "\n") {
		if !strings.HasPrefix(line, "| ") || !strings.Contains(line, "randread") {
			continue
		}
		if strings.Contains(line, "significant") || strings.Contains(line, "within the noise") {
			verdicts++
		} else {
			t.Errorf("a point's row states no verdict: %s", line)
		}
	}
	// Two points by IOPS, MB/s, mean and p99 latency.
	if verdicts < 8 {
		t.Errorf("%d point rows with a verdict, want one per point and figure:\n%s", verdicts, md)
	}
}

// fioDir is a fresh directory for fio to measure, on tmpfs, which
// deallocates a file's blocks as a disk's filesystem does and fills fast;
// a machine without fio skips the test.
func fioDir(t *testing.T, prefix string) string {
	t.Helper()
	testenv.RequireProgram(t, "fio", testenv.InstallFio)
	dir, err := os.MkdirTemp("/dev/shm", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
