package fio

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/fleet"
	"dbio/internal/results"
	"dbio/internal/testfleet"
)

// fleetTestPort is where the servers dbio starts listen: the test fleet's
// own fio servers hold fio's default port.
const fleetTestPort = 8766

// TestFourCornersOnThreeHosts runs a short four-corners pass on a fleet of
// three hosts and checks what a fleet point records: each host's job file,
// report and logs in its own directory, the fleet's IOPS the sum of the
// hosts' over the common window, its p99 that of their merged bins, and no
// fio left on the hosts afterwards.
func TestFourCornersOnThreeHosts(t *testing.T) {
	requireFio(t)
	f := testfleet.Start(t, 3)
	var hosts []fleet.Host
	var targets []string
	for _, h := range f.Hosts {
		hosts = append(hosts, fleet.Host{Name: h.Name, Destination: h.Name, SSHConfig: f.SSHConfig, WorkDir: h.Storage, FioPort: fleetTestPort})
		dir := filepath.Join(h.Storage, "data")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, h.Name+":"+dir)
	}
	c := Config{Profile: "four-corners", Targets: targets, Hosts: hosts, Runtime: 4 * time.Second, Ramp: durp(0), Size: 16 << 20, Jobs: 1, IODepths: []int{4}}
	d := newDir(t, c)
	var out bytes.Buffer
	pts, err := Run(t.Context(), c, d, 0, execx.Real{Proc: "/proc"}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if err := d.Finish(results.StatusCompleted, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	t.Logf("output:\n%s", out.String())
	plan, err := NewPlan(c, BuiltinProfiles())
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != len(plan.Points) || len(pts) < 4 {
		t.Fatalf("%d points, want the plan's %d", len(pts), len(plan.Points))
	}
	l, err := results.Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range f.Hosts {
		if v := l.Run.Environment.Versions["fio on "+h.Name]; v != l.Run.Environment.Versions["fio"] {
			t.Errorf("fio on %s: %q, here %q", h.Name, v, l.Run.Environment.Versions["fio"])
		}
	}
	for _, s := range l.Steps {
		fl := s.Fio.Fleet
		if s.Status != results.StatusCompleted || fl == nil || len(fl.Hosts) != 3 {
			t.Fatalf("step %s: %s (%s), fleet %+v", s.Name, s.Status, s.Error, fl)
		}
		if fl.Seconds < 1 {
			t.Errorf("step %s: a window of %d s", s.Name, fl.Seconds)
		}
		stepDir, _ := d.StepDir(s.Index, s.Name)
		var sum float64
		for i, h := range fl.Hosts {
			if h.Host != f.Hosts[i].Name || h.Total == nil {
				t.Fatalf("step %s: host row %d: %+v", s.Name, i, h)
			}
			sum += h.Total.IOPS
			hostDir := filepath.Join(stepDir, HostsDir, h.Host)
			for _, name := range []string{JobFileName, OutputFileName} {
				if _, err := os.Stat(filepath.Join(hostDir, name)); err != nil {
					t.Errorf("step %s: %v", s.Name, err)
				}
			}
			logs, err := ReadLogs(hostDir)
			if err != nil || len(logs) == 0 {
				t.Errorf("step %s: %s's logs: %v, %d jobs", s.Name, h.Host, err, len(logs))
			}
			// The host's own report holds its job alone.
			b, _ := os.ReadFile(filepath.Join(hostDir, OutputFileName))
			rep, err := Parse(bytes.NewReader(b))
			if err != nil || len(rep.Groups) != 1 || rep.Groups[0].Host != f.Hosts[i].Addr.String() {
				t.Errorf("step %s: %s's report: %v, %+v", s.Name, h.Host, err, rep)
			}
			// fio's working file is on the host's target.
			if _, err := os.Stat(filepath.Join(f.Hosts[i].Storage, "data", "dbio", "fio", "work.dat")); err != nil {
				t.Errorf("host %s: %v", h.Host, err)
			}
		}
		if math.Abs(s.Fio.Total.IOPS-sum) > 1e-6*sum {
			t.Errorf("step %s: fleet %v IOPS, hosts' sum %v", s.Name, s.Fio.Total.IOPS, sum)
		}
		// The fleet's p99 is read again from the stored host logs.
		var hostSecs [][]Second
		for _, h := range fl.Hosts {
			logs, _ := ReadLogs(filepath.Join(stepDir, HostsDir, h.Host))
			secs, _ := MergeSeconds(logs)
			hostSecs = append(hostSecs, secs)
		}
		again, err := Fleet(hostSecs)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := again.Fleet.Total.Completion.At(99)
		got, _ := s.Fio.Total.Completion.At(99)
		if got != want || got <= 0 {
			t.Errorf("step %s: fleet p99 %v µs, the merged bins' %v µs", s.Name, got, want)
		}
		if v := analysisValue(s, results.FigureIOPS); v != s.Fio.Total.IOPS {
			t.Errorf("step %s: iops figure %v, fleet %v", s.Name, v, s.Fio.Total.IOPS)
		}
	}
	if !strings.Contains(out.String(), "fleet: ") || !strings.Contains(out.String(), "h3") {
		t.Errorf("the terminal shows no fleet and host rows:\n%s", out.String())
	}
	waitNoFio(t, f)
}

func analysisValue(s results.Step, name results.FigureName) float64 {
	for _, f := range s.Figures {
		if f.Name == name {
			return f.Value
		}
	}
	return math.NaN()
}

// waitNoFio waits until nothing dbio started is left on the hosts.
func waitNoFio(t *testing.T, f *testfleet.Fleet) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a loaded machine ends ssh sessions slowly
	for {
		strays, err := f.Strays(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(strays) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left on the hosts after the run: %v", strays)
		}
		time.Sleep(50 * time.Millisecond) // polling the hosts' process lists
	}
}
