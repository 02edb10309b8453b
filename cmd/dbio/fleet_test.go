package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbio/internal/results"
	"dbio/internal/testfleet"
)

// fleetDisk is dbio disk's command line for a short four-corners pass on
// every host of f, each on a data directory of its storage, with fio
// servers dbio starts on a port beside the fleet's own.
func fleetDisk(t *testing.T, f *testfleet.Fleet, base, runtime string) []string {
	args := []string{"disk", "--ssh-config", f.SSHConfig, "--fio-port", "8766", "--profile", "four-corners",
		"--runtime", runtime, "--ramp-time", "0s", "--size", "16m", "--jobs", "1", "--iodepth", "4", "--results", base}
	for _, h := range f.Hosts {
		dir := filepath.Join(h.Storage, "data")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--host", h.Name+"="+h.Name, "--target", h.Name+":"+dir)
	}
	return args
}

// TestDiskOnFleet runs dbio disk's four corners on three hosts and renders
// its report: every point has its fleet row and a row per host.
func TestDiskOnFleet(t *testing.T) {
	// A fleet run mostly waits (ssh, the hosts' fio and servers for their
	// fixed durations): it shares the machine with the other fleet tests.
	t.Parallel()
	f := testfleet.Start(t, 3)
	base := t.TempDir()
	// dbio runs as a program of its own, so that the coordinator's CPU and
	// memory can be read from its end (the fio client is its child).
	began := time.Now()
	p := startDBIO(t, fleetDisk(t, f, base, "4s")...)
	code := p.exit()
	took := time.Since(began)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.Logf("coordinator (dbio itself, without its fio client): %.2f s user, %.2f s system over %s, peak RSS %d MiB",
			p.cmd.ProcessState.UserTime().Seconds(), p.cmd.ProcessState.SystemTime().Seconds(), took.Round(time.Millisecond), ru.Maxrss/1024)
	}
	for _, want := range []string{"reaching 3 host(s) over ssh: h1, h2, h3", "fleet: ", "h1  ", "h3  ", "8 of 8 point(s) finished"} {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("the run does not say %q:\n%s", want, p.out)
		}
	}
	var out bytes.Buffer
	f.WaitNoStrays(t)
	dir := runDir(base)
	l, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Steps {
		if s.Fio == nil || s.Fio.Fleet == nil || len(s.Fio.Fleet.Hosts) != 3 {
			t.Fatalf("step %s records no fleet of 3 hosts", s.Name)
		}
	}
	out.Reset()
	if code := run(t.Context(), testApp(&out), []string{"report", dir}); code != exitOK {
		t.Fatalf("report: exit %d:\n%s", code, out.String())
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(md), "Fleet and hosts"); i >= 0 && testing.Verbose() {
		t.Logf("%s", string(md)[i:min(len(md), i+9000)])
	}
	for _, want := range []string{"Fleet and hosts", "| fleet |", "| h2 |", "CPU and disks per host", "clock offset (ms)",
		"Fleet and hosts second by second", "IOPS per second: the fleet and each host"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
}

// TestKilledDiskOnFleetLeavesNoFio stops dbio mid-point, by Ctrl-C and by
// SIGKILL: no fio server or job it started is left on any host, and the
// interrupted run keeps its results.
func TestKilledDiskOnFleetLeavesNoFio(t *testing.T) {
	// A fleet run mostly waits (ssh, the hosts' fio and servers for their
	// fixed durations): it shares the machine with the other fleet tests.
	t.Parallel()
	f := testfleet.Start(t, 3)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			base := t.TempDir()
			p := startDBIO(t, fleetDisk(t, f, base, "60s")...)
			p.waitLine("[1/") // the first point has started, whatever the profile's count
			// The fio servers run the first point's jobs: a server and the
			// process it forked for the client's connection on every host.
			p.waitFor("fio jobs on every host", func() bool {
				left, err := f.Strays(context.Background())
				if err != nil {
					return false
				}
				fios := map[string]int{}
				for _, s := range left {
					if strings.Contains(s.Command, "fio --server") {
						fios[s.Host]++
					}
				}
				return fios["h1"] >= 2 && fios["h2"] >= 2 && fios["h3"] >= 2
			})
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
				var run results.Run
				if b, err := os.ReadFile(filepath.Join(runDir(base), "run.json")); err != nil || json.Unmarshal(b, &run) != nil || run.Status != results.StatusInterrupted {
					t.Errorf("run.json after Ctrl-C: %s, %v", run.Status, err)
				}
			}
			f.WaitNoStrays(t)
		})
	}
}

// TestSuiteOnFleet runs a suite whose disk run measures a target spread
// over three hosts.
func TestSuiteOnFleet(t *testing.T) {
	// A fleet run mostly waits (ssh, the hosts' fio and servers for their
	// fixed durations): it shares the machine with the other fleet tests.
	t.Parallel()
	f := testfleet.Start(t, 3)
	base := t.TempDir()
	var b strings.Builder
	fmt.Fprintf(&b, "name = \"cluster\"\nresults = %q\n", base)
	var paths []string
	for _, h := range f.Hosts {
		dir := filepath.Join(h.Storage, "data")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n[[host]]\nname = %q\ndestination = %q\nssh_config = %q\nfio_port = 8766\n", h.Name, h.Name, f.SSHConfig)
		paths = append(paths, fmt.Sprintf("%q", h.Name+":"+dir))
	}
	fmt.Fprintf(&b, "\n[targets.cluster]\npaths = [%s]\n", strings.Join(paths, ", "))
	b.WriteString("\n[workloads.corners]\nkind = \"disk\"\nprofile = \"four-corners\"\nsize = \"16MB\"\nruntime = \"4s\"\nramp_time = \"0s\"\n")
	b.WriteString("\n[[runs]]\nname = \"cluster-corners\"\nworkload = \"corners\"\ndata = \"cluster\"\n")
	file := filepath.Join(t.TempDir(), "cluster.toml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(t.Context(), testApp(&out), []string{"suite", file}); code != exitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, out.String(), b.String())
	}
	runs, _ := filepath.Glob(filepath.Join(base, "*", "*cluster-corners*", "run.json"))
	if len(runs) != 1 {
		all, _ := filepath.Glob(filepath.Join(base, "*", "*"))
		t.Fatalf("results %v under %s (%v):\n%s", runs, base, all, out.String())
	}
	l, err := results.Load(filepath.Dir(runs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Steps) == 0 {
		t.Fatal("no steps")
	}
	for _, s := range l.Steps {
		if s.Fio == nil || s.Fio.Fleet == nil || len(s.Fio.Fleet.Hosts) != 3 {
			t.Errorf("step %s records no fleet of 3 hosts", s.Name)
		}
	}
	f.WaitNoStrays(t)
}
