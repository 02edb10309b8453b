package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/testenv"
	"dbio/internal/testfleet"
)

// buildDBIO builds dbio itself: the coordinator copies its own program to
// the hosts, and this test binary is not one a host could run as dbio.
func buildDBIO(t *testing.T) string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = testenv.RequireProgram(t, "go", "install Go (https://go.dev/dl/)")
	}
	bin := filepath.Join(t.TempDir(), "dbio")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// tenantsOnFleet is dbio tpcc's command line for one-warehouse TPC-C
// tenants on every host of f, each on a data directory of its storage that
// the hosts' PostgreSQL user can reach.
func tenantsOnFleet(t *testing.T, f *testfleet.Fleet, base, runtime string) []string {
	t.Helper()
	return workloadOnFleet(t, f, base, runtime, "tpcc", "--warehouses", "1")
}

// tinySysbenchOnFleet is tenantsOnFleet with sysbench's one table of a
// thousand rows, loaded in a second: for the tests of the tenants'
// lifecycle (refusals, signals), which TPC-C's load would only make longer.
func tinySysbenchOnFleet(t *testing.T, f *testfleet.Fleet, base, runtime string) []string {
	t.Helper()
	return workloadOnFleet(t, f, base, runtime, "sysbench", "--tables", "1", "--table-size", "1000")
}

func workloadOnFleet(t *testing.T, f *testfleet.Fleet, base, runtime string, workload ...string) []string {
	t.Helper()
	// The test's temporary directories are root's alone; the server runs
	// as an unprivileged user and must reach its directory.
	for _, d := range []string{filepath.Dir(f.Dir), f.Dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	args := append(workload, "--engine", "postgres", "--users", "1", "--ramp-time", "0s", "--runtime", runtime,
		"--ssh-config", f.SSHConfig, "--results", base)
	for _, h := range f.Hosts {
		dir := filepath.Join(h.Storage, "db")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--host", h.Name+"="+h.Name, "--target", h.Name+":"+dir)
	}
	return args
}

// TestTenantsOnFleet runs TPC-C tenants on two hosts: dbio is copied to
// each, both load and start at the barrier's instant, their results come
// back, and the fleet's NOPM and p99 are the hosts' summed over the common
// window and their histograms merged. Nothing is left on the hosts.
func TestTenantsOnFleet(t *testing.T) {
	// A fleet run mostly waits (ssh, the hosts' fio and servers for their
	// fixed durations): it shares the machine with the other fleet tests.
	t.Parallel()
	testenv.RequireEngine(t, "postgres")
	f := testfleet.Start(t, 2)
	bin := buildDBIO(t)
	base := t.TempDir()
	began := time.Now()
	p := startProgram(t, bin, tenantsOnFleet(t, f, base, "5s")...)
	code := p.exit()
	took := time.Since(began)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.Logf("coordinator: %.2f s user, %.2f s system over %s, peak RSS %d MiB",
			p.cmd.ProcessState.UserTime().Seconds(), p.cmd.ProcessState.SystemTime().Seconds(), took.Round(time.Millisecond), ru.Maxrss/1024)
	}
	l, dir := fleetRunBack(t, f, p, base, "host h1: dbio copied", "host h2: dbio copied", "start barrier: every host started", "fleet over the", "h1: results:")
	ten := l.Run.Tenants
	if ten == nil || len(ten.Hosts) != 2 {
		t.Fatalf("run.json records no tenants on 2 hosts: %+v", ten)
	}
	if ten.BarrierAt.IsZero() || ten.SkewMS < 0 {
		t.Errorf("barrier at %v, skew %v ms: not recorded", ten.BarrierAt, ten.SkewMS)
	}
	t.Logf("start barrier at %s: skew %.3f ms", ten.BarrierAt.Format(time.RFC3339Nano), ten.SkewMS)
	for _, h := range ten.Hosts {
		if h.Started.IsZero() || h.Status != results.StatusCompleted || h.Dir == "" {
			t.Errorf("host %s: started %v, status %s, results in %q", h.Host, h.Started, h.Status, h.Dir)
		}
		t.Logf("host %s started %.3f ms after the instant", h.Host, h.LateMS)
		if _, err := os.Stat(filepath.Join(dir, h.Dir, "run.json")); err != nil {
			t.Errorf("host %s's results did not come back: %v", h.Host, err)
		}
	}
	for _, h := range f.Hosts {
		left, _ := filepath.Glob(filepath.Join(h.Home, ".dbio", "runs", "*"))
		if len(left) > 0 {
			t.Errorf("host %s keeps the tenant's results dbio made: %v", h.Name, left)
		}
	}
	if len(l.Steps) != 1 {
		t.Fatalf("%d steps, want the fleet's one", len(l.Steps))
	}
	step := l.Steps[0]
	if step.Fleet == nil {
		t.Fatalf("step %s has no fleet detail", step.Name)
	}
	fleet := *step.Fleet
	checkFleetNOPM(t, dir, ten, step, fleet)
	checkFleetP99(t, dir, ten, step)
	checkFleetCPU(t, dir, ten, step, fleet)
	if len(l.Run.Checks) == 0 || !strings.HasPrefix(l.Run.Checks[0].Name, "h1: ") {
		t.Errorf("the hosts' consistency checks are not the run's: %+v", l.Run.Checks)
	}
	// The summary on the terminal and the report have a row per host
	// beside the fleet's.
	if !strings.Contains(p.out.String(), "fleet and hosts") {
		t.Errorf("the terminal summary has no fleet and hosts table:\n%s", p.out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(md), "Fleet and hosts"); i >= 0 && testing.Verbose() {
		t.Logf("%s", string(md)[i:min(len(md), i+1500)])
	}
	for _, want := range []string{"Fleet and hosts", "| fleet |", "| h1 |", "| h2 |", "Fleet and hosts second by second", "NOPM per second: the fleet and each host",
		"**CPU and disks per host**"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
}

// fleetRunBack checks that a finished run on f's hosts said each of
// wants and left nothing on the hosts, and loads its results directory.
func fleetRunBack(t *testing.T, f *testfleet.Fleet, p *runningDBIO, base string, wants ...string) (*results.Loaded, string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("the run does not say %q:\n%s", want, p.out)
		}
	}
	f.WaitNoStrays(t)
	dir := runDir(base)
	l, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l, dir
}

// checkFleetCPU checks that the fleet's step holds each host's CPU as the
// host's own dbio summarized it over its step, and the fleet's CPU as
// their mean.
func checkFleetCPU(t *testing.T, dir string, ten *results.Tenants, step results.Step, fleet results.TenantFleet) {
	t.Helper()
	if step.Telemetry == nil || len(step.Telemetry.Hosts) != len(ten.Hosts) {
		t.Fatalf("the fleet's step has no telemetry per host: %+v", step.Telemetry)
	}
	var userSum float64
	for i, h := range ten.Hosts {
		got := step.Telemetry.Hosts[i]
		hl, err := results.Load(filepath.Join(dir, h.Dir))
		if err != nil {
			t.Fatal(err)
		}
		own := hl.Steps[0].Telemetry
		if got.Host != h.Host || got.System == nil || own == nil {
			t.Fatalf("host %s: telemetry %+v in the fleet's step, %+v in its own", h.Host, got, own)
		}
		if got.System.CPUUserPct+got.System.CPUSystemPct <= 0 || got.System.CPUUserPct != own.Mean("cpu_user_pct") ||
			got.System.CPUIowaitPct != own.Mean("cpu_iowait_pct") || got.System.Seconds != own.Samples {
			t.Errorf("host %s: CPU %+v in the fleet's step; its own step: user %v %%, iowait %v %% over %d s",
				h.Host, *got.System, own.Mean("cpu_user_pct"), own.Mean("cpu_iowait_pct"), own.Samples)
		}
		userSum += got.System.CPUUserPct
	}
	if fleet.System == nil || math.Abs(fleet.System.CPUUserPct-userSum/float64(len(ten.Hosts))) > 1e-9 {
		t.Errorf("the fleet's CPU %+v is not the hosts' mean (user %v %%)", fleet.System, userSum/float64(len(ten.Hosts)))
	}
}

// checkFleetNOPM checks that the fleet's NOPM is the sum of the hosts'
// NOPM over the common window, each read from the host's own series.
func checkFleetNOPM(t *testing.T, dir string, ten *results.Tenants, step results.Step, fleet results.TenantFleet) {
	t.Helper()
	if fleet.Seconds < 1 {
		t.Fatalf("common window of %d s", fleet.Seconds)
	}
	sum := 0.0
	for _, h := range ten.Hosts {
		hl, err := results.Load(filepath.Join(dir, h.Dir))
		if err != nil {
			t.Fatal(err)
		}
		col := hl.Series.Column(string(results.FigureNOPM))
		// A host's second, on the coordinator's clock: its run's start plus
		// the row's elapsed time (series.csv's time of day is to the second
		// only), less the host's clock offset measured at the start.
		var offset time.Duration
		for _, c := range h.Clock {
			if c.At == "start" {
				offset = time.Duration(c.OffsetMS * float64(time.Millisecond))
			}
		}
		total, n := 0.0, 0
		for _, r := range hl.Series.Rows {
			at := hl.Run.Started.Add(time.Duration(r.ElapsedS*float64(time.Second)) - offset)
			// The window's seconds are on a clock counted from the earliest
			// host's first second: a host's second within half a second of one.
			if r.Step != step.Name || r.Phase != "measure" || at.Before(fleet.WindowStart.Add(-500*time.Millisecond)) || at.After(fleet.WindowEnd.Add(500*time.Millisecond)) {
				continue
			}
			if v := r.Values[col]; !math.IsNaN(v) {
				total += v
			}
			n++
		}
		if n != fleet.Seconds {
			t.Errorf("host %s has %d seconds in the window, the fleet %d", h.Host, n, fleet.Seconds)
			continue
		}
		sum += total / float64(n)
	}
	got, _ := step.Figure(results.FigureNOPM)
	// Figures are stored to six significant digits (results.Round6).
	if math.Abs(got-sum) > 1e-5*sum || got <= 0 {
		t.Errorf("fleet NOPM %v, the hosts' over the common window sum to %v", got, sum)
	}
	t.Logf("fleet NOPM %.1f over %d s = the hosts' sum %.1f", got, fleet.Seconds, sum)
}

// checkFleetP99 checks that the fleet's p99 is the p99 of every host's
// histograms merged.
func checkFleetP99(t *testing.T, dir string, ten *results.Tenants, step results.Step) {
	t.Helper()
	merged := metrics.NewHistogram()
	for _, h := range ten.Hosts {
		files, _ := filepath.Glob(filepath.Join(dir, h.Dir, "steps", "*", "latency-*.hdr"))
		for _, f := range files {
			if strings.HasSuffix(f, "-corrected.hdr") {
				continue
			}
			hist, err := results.ReadHistogram(f)
			if err != nil {
				t.Fatal(err)
			}
			merged.Merge(hist)
		}
	}
	want := float64(merged.ValueAtQuantile(99)) / 1000
	got, _ := step.Figure(results.FigureLatencyP99)
	if got != want || merged.TotalCount() == 0 {
		t.Errorf("fleet p99 %v ms, the merged histograms' %v ms (%d transactions)", got, want, merged.TotalCount())
	}
	if step.Fleet == nil {
		t.Fatalf("step %s: no fleet record", step.Name)
	}
	if detail := step.Fleet; detail.Latency.Count != merged.TotalCount() {
		t.Errorf("fleet latency of %d transactions, the hosts' histograms %d", detail.Latency.Count, merged.TotalCount())
	}
}

// TestKilledTenantsLeaveNothing stops the coordinator while its tenants
// measure, by Ctrl-C and by SIGKILL: no dbio or PostgreSQL is left on any
// host, and after Ctrl-C the hosts' results came back.
func TestKilledTenantsLeaveNothing(t *testing.T) {
	// A fleet run mostly waits (ssh, the hosts' fio and servers for their
	// fixed durations): it shares the machine with the other fleet tests.
	t.Parallel()
	testenv.RequireEngine(t, "postgres")
	f := testfleet.Start(t, 2)
	bin := buildDBIO(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			base := t.TempDir()
			p := startProgram(t, bin, tinySysbenchOnFleet(t, f, base, "120s")...)
			p.waitLine("start barrier: every host started")
			p.signal(sig)
			code := p.exit()
			switch sig {
			case syscall.SIGKILL:
				if code != -1 {
					t.Errorf("exit code %d, want death by SIGKILL", code)
				}
			default:
				if code != exitInterrupted {
					t.Errorf("exit code %d, want %d:\n%s", code, exitInterrupted, p.out)
				}
				l, err := results.Load(runDir(base))
				if err != nil {
					t.Fatal(err)
				}
				if l.Run.Status != results.StatusInterrupted || l.Run.Tenants == nil {
					t.Fatalf("run.json after Ctrl-C: %s, tenants %+v", l.Run.Status, l.Run.Tenants)
				}
				for _, h := range l.Run.Tenants.Hosts {
					if h.Dir == "" {
						t.Errorf("host %s's results did not come back", h.Host)
					}
				}
			}
			f.WaitNoStrays(t)
		})
	}
}

// TestTenantsBadInput: a run on hosts with bad input stops before anything
// is written, with exit code 2 and the problem named.
func TestTenantsBadInput(t *testing.T) {
	base := t.TempDir()
	hosts := []string{"--host", "h1=admin@10.0.0.11", "--host", "h2=admin@10.0.0.12", "--results", base}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"host not named", []string{"--target", "h1:/srv/db", "--target", "h3:/srv/db"}, "host h3, which is not named"},
		{"local target beside hosts", []string{"--target", "h1:/srv/db", "--target", "/srv/db"}, "--target /srv/db is on this machine"},
		{"two tenants on a host", []string{"--target", "h1:/srv/db", "--target", "h1:/srv/db2"}, "host h1 has a target already"},
		{"relative path on a host", []string{"--target", "h1:srv/db"}, "NAME:/absolute/path"},
		{"dsn", []string{"--target", "h1:/srv/db", "--dsn", "postgres://u@db/x"}, "--dsn: a run on hosts"},
		{"log target", []string{"--target", "h1:/srv/db", "--log-target", "/srv/log"}, "--log-target: not on hosts yet"},
		{"ramp until", []string{"--target", "h1:/srv/db", "--ramp-until", "tps_slope:1%"}, "--ramp-until: each host"},
		{"repeat", []string{"--target", "h1:/srv/db", "--repeat", "2"}, "--repeat: not on hosts yet"},
		{"barrier typed", []string{"--target", "h1:/srv/db", "--start-barrier"}, "--start-barrier"},
		// dbio noisy on hosts.
		{"noisy backup target", []string{"noisy", "--target", "h1:/srv/db", "--backup-target", "/srv/backups"}, "--backup-target: not on hosts yet"},
		{"noisy driven from here", []string{"noisy", "--target", "h1:/srv/db", "--driver", "coordinator"}, "--driver coordinator: a noisy-neighbour run"},
		{"noisy dsn", []string{"noisy", "--target", "h1:/srv/db", "--dsn", "postgres://u@db/x"}, "--dsn: a run on hosts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			command, given := "tpcc", tt.args
			if given[0] == "noisy" {
				command, given = "noisy", given[1:]
			}
			args := append(append([]string{command, "--engine", "postgres"}, hosts...), given...)
			if code := run(t.Context(), testApp(&out), args); code != exitUsage {
				t.Errorf("exit %d, want %d:\n%s", code, exitUsage, out.String())
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output does not name the problem %q:\n%s", tt.want, out.String())
			}
			if entries, _ := os.ReadDir(base); len(entries) > 0 {
				t.Errorf("bad input wrote %v", entries)
			}
		})
	}
}

// TestForwardedFlags: each host's dbio gets the flags as given, under
// their current names, without the coordinator's own.
func TestForwardedFlags(t *testing.T) {
	fs := pflag.NewFlagSet("tpcc", pflag.ContinueOnError)
	var users, target, results string
	var runtime time.Duration
	var settings, hosts []string
	var skip bool
	fs.StringVar(&users, "users", "1", "")
	fs.DurationVar(&runtime, "runtime", time.Minute, "")
	alias(fs, "step", "runtime")
	fs.StringVar(&target, "target", "", "")
	fs.StringVar(&results, "results", "results", "")
	fs.StringArrayVar(&settings, "setting", nil, "")
	fs.StringArrayVar(&hosts, "host", nil, "")
	fs.BoolVar(&skip, "skip-checks", false, "")
	if err := fs.Parse([]string{"--users", "1,2", "--step", "5s", "--target", "h1:/x", "--results", "r", "--setting", "a=1", "--setting", "b=2", "--host", "h1=x", "--skip-checks"}); err != nil {
		t.Fatal(err)
	}
	if err := resolveAliases(fs, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(forwardedFlags(fs), " ")
	want := "--runtime=5s --setting=a=1 --setting=b=2 --skip-checks=true --users=1,2"
	if got != want {
		t.Errorf("forwarded %q, want %q", got, want)
	}
}

// TestTenantRefused: a target missing on a host is bad input, found over
// ssh before anything is written; a host whose dbio refuses its run (its
// target holds a dbio directory dbio did not make) fails the run with that
// host's message, and the other host, loading or waiting at the barrier, is stopped.
// Nothing is left on either host.
func TestTenantRefused(t *testing.T) {
	// A fleet run mostly waits (ssh, the hosts' fio and servers for their
	// fixed durations): it shares the machine with the other fleet tests.
	t.Parallel()
	testenv.RequireEngine(t, "postgres")
	f := testfleet.Start(t, 2)
	bin := buildDBIO(t)
	cases := []struct {
		name string
		// spoil makes h2's target unusable and returns what the run must say.
		spoil func(t *testing.T, target string) []string
		code  int
	}{
		{"target missing", func(t *testing.T, target string) []string {
			if err := os.Remove(target); err != nil {
				t.Fatal(err)
			}
			return []string{"target h2:" + target + " does not exist"}
		}, exitUsage},
		{"host refuses", func(t *testing.T, target string) []string {
			if err := os.MkdirAll(filepath.Join(target, "dbio"), 0o755); err != nil {
				t.Fatal(err)
			}
			return []string{"host h2 ended before it was ready", results.MarkerName}
		}, exitFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			args := tinySysbenchOnFleet(t, f, base, "5s")
			says := c.spoil(t, filepath.Join(f.Hosts[1].Storage, "db"))
			p := startProgram(t, bin, args...)
			if code := p.exit(); code != c.code {
				t.Fatalf("exit %d, want %d:\n%s", code, c.code, p.out)
			}
			if testing.Verbose() {
				t.Logf("%s", p.out)
			}
			for _, want := range says {
				if !strings.Contains(p.out.String(), want) {
					t.Errorf("the run does not say %q:\n%s", want, p.out)
				}
			}
			f.WaitNoStrays(t)
			for _, h := range f.Hosts {
				if left, _ := filepath.Glob(filepath.Join(h.Home, ".dbio", "runs", "*")); len(left) > 0 {
					t.Errorf("host %s keeps %v", h.Name, left)
				}
			}
			if c.code == exitUsage {
				if entries, _ := os.ReadDir(base); len(entries) > 0 {
					t.Errorf("bad input wrote %v", entries)
				}
				return
			}
			l, err := results.Load(runDir(base))
			if err != nil {
				t.Fatal(err)
			}
			if l.Run.Status != results.StatusFailed || l.Run.Tenants == nil || l.Run.Tenants.Hosts[1].Error == "" {
				t.Errorf("run.json: status %s, tenants %+v", l.Run.Status, l.Run.Tenants)
			}
		})
	}
}
