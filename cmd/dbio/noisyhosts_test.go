package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/testenv"
	"dbio/internal/testfleet"
)

// TestNoisyOnFleet runs the noisy-neighbour scenario on two hosts, two
// tenants on each, one of them backing up: every host runs both phases,
// each released at one instant; the fleet's steps are the phases, their
// TPM the hosts' summed; each host's backup is in the coordinator's
// run.json on its clock, inside the interference phase, and marked on
// the fleet's timeline.
func TestNoisyOnFleet(t *testing.T) {
	// A fleet run mostly waits (ssh, the hosts' fio and servers for their
	// fixed durations): it shares the machine with the other fleet tests.
	t.Parallel()
	testenv.RequireEngine(t, "postgres")
	f := testfleet.Start(t, 2)
	bin := buildDBIO(t)
	base := t.TempDir()
	args := tenantsOnFleet(t, f, base, "3s")
	args[0] = "noisy"
	args = append(args, "--tenants", "2", "--backup-tenants", "1", "--cycles", "1", "--interval", "1s")
	p := startProgram(t, bin, args...)
	if code := p.exit(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	if testing.Verbose() {
		t.Logf("%s", p.out)
	}
	l, dir := fleetRunBack(t, f, p, base, "plan:    noisy neighbours (2 tenants", "start barrier: every host started", "start barrier: step 2: 2 hosts started",
		"[2/2] interference: fleet over the", "h1 backups: t2 cycle 1 at ", "h2 backups: t2 cycle 1 at ")
	ten := l.Run.Tenants
	if ten == nil || len(ten.Hosts) != 2 || len(ten.Steps) != 2 {
		t.Fatalf("run.json records no two hosts released twice: %+v", ten)
	}
	if len(l.Steps) != 2 || l.Steps[0].Name != "quiet" || l.Steps[1].Name != "interference" {
		t.Fatalf("steps %+v, want the fleet's quiet and interference phases", l.Steps)
	}
	for _, s := range l.Steps {
		fleet := s.Fleet
		if fleet == nil || s.Total == nil {
			t.Fatalf("step %s: no fleet detail or no transactions", s.Name)
		}
		got, _ := s.Figure(results.FigureTPM)
		sum := 0.0
		for _, h := range fleet.Hosts {
			v, _ := h.Figure(results.FigureTPM)
			sum += v
		}
		if got <= 0 || math.Abs(got-sum) > 1e-5*sum {
			t.Errorf("step %s: fleet TPM %v, the hosts' %v", s.Name, got, sum)
		}
		if s.Total.Latency.Count == 0 {
			t.Errorf("step %s: the fleet's latency merges no histogram", s.Name)
		}
		// Each host's phase telemetry, as its own dbio sampled it, is the
		// fleet's phase's per host.
		if s.Telemetry == nil || len(s.Telemetry.Hosts) != 2 || fleet.System == nil || len(fleet.System.Hosts) != 2 {
			t.Errorf("step %s: telemetry %+v, the fleet's CPU and disks %+v: want both hosts'", s.Name, s.Telemetry, fleet.System)
		} else {
			for _, h := range s.Telemetry.Hosts {
				if h.System == nil || h.System.CPUUserPct+h.System.CPUSystemPct <= 0 {
					t.Errorf("step %s: host %s's CPU %+v", s.Name, h.Host, h.System)
				}
			}
		}
		t.Logf("%s: fleet TPM %.0f over %d s, p99 %.1f ms", s.Name, got, fleet.Seconds, float64(fleet.Latency.P99US)/1000)
	}
	interference := l.Steps[1]
	for _, h := range ten.Hosts {
		if len(h.Backups) != 1 {
			t.Errorf("host %s: backups %+v, want its t2's one", h.Host, h.Backups)
			continue
		}
		b := h.Backups[0]
		if b.Tenant != "t2" || b.Phase != "interference" || b.Error != "" || b.Bytes <= 0 || b.Seconds <= 0 {
			t.Errorf("host %s: backup %+v", h.Host, b)
		}
		// On the coordinator's clock, within the phase (its start to the
		// millisecond a host's clock offset is known to).
		if b.Start.Before(interference.Started.Add(-50e6)) || b.Start.After(interference.Ended) {
			t.Errorf("host %s: backup at %v, outside the interference phase %v to %v", h.Host, b.Start, interference.Started, interference.Ended)
		}
	}
	tls, err := analysis.FleetTimelines(analysis.NewRecorded(l))
	if err != nil || len(tls) == 0 {
		t.Fatalf("fleet timelines: %v, %d", err, len(tls))
	}
	marked := map[string]bool{}
	for _, m := range tls[0].Marks {
		marked[m.Host] = true
	}
	if !marked["h1"] || !marked["h2"] {
		t.Errorf("the fleet timeline marks backups of %v, want h1's and h2's", tls[0].Marks)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Fleet and hosts", "| h1 |", "Fleet and hosts second by second", "**CPU and disks per host**"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
}
