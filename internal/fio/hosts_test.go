package fio

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/fleet"
	"dbio/internal/results"
	"dbio/internal/telemetry"
	"dbio/internal/testfleet"
)

// A host's node exporter samples are stamped with this machine's clock,
// as the fleet's window is once the hosts' seconds are put on it: the
// samples within the window are those whose stamps are in it, whatever
// the host's clock offset.
func TestHostTelemetryWindow(t *testing.T) {
	exp, err := telemetry.NewExporter(telemetry.ExporterOptions{URL: "http://192.0.2.1:9100/metrics"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	hs := &hostSamples{exp: exp}
	for i := range 10 {
		// Second i's CPU share is i: which seconds were kept shows in the mean.
		hs.at = append(hs.at, t0.Add(time.Duration(i)*time.Second+100*time.Millisecond))
		hs.pts = append(hs.pts, []telemetry.Point{{Name: "cpu_user_pct", Value: float64(i)}})
	}
	w := &pointWatch{hosts: map[string]*hostSamples{"h1": hs}}
	from, to := t0.Add(6*time.Second), t0.Add(8*time.Second)
	got := w.hostTelemetry("h1", from, to, t0)
	sum, sys := got.Telemetry, got.System
	if got.Host != "h1" || sum == nil || sys == nil {
		t.Fatal("no telemetry")
	}
	if sum.Samples != 3 || sys.CPUUserPct != 7 {
		t.Errorf("%d samples of mean CPU user %.1f%%, want the 3 seconds 6..8 (mean 7%%)", sum.Samples, sys.CPUUserPct)
	}
}

// A host that fails lets its targets go at once, not at the end of the
// run: the run may go on for hours without it, and a run started on that
// host meanwhile must find its targets free.
func TestFailedHostReleasesItsLocks(t *testing.T) {
	f := testfleet.Start(t, 2)
	shell := fleet.Shell{Exec: execx.Real{}}
	var hosts []fleet.Host
	for _, h := range f.Hosts {
		hosts = append(hosts, fleet.Host{Name: h.Name, Destination: h.Name, SSHConfig: f.SSHConfig, WorkDir: h.Storage, FioPort: fleetTestPort})
	}
	version, err := exec.Command("fio", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	sess, err := shell.OpenServers(t.Context(), hosts, strings.TrimSpace(string(version)))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	p := newHostsPlace(&runner{exec: execx.Real{}, now: time.Now})
	p.servers = sess
	for _, h := range hosts {
		p.hosts[h.Name] = h
		p.live = append(p.live, &site{host: h.Name})
	}
	var dirs []string
	for i, h := range hosts {
		p.record[h.Name] = &results.FleetHost{Name: h.Name, Status: results.HostOK}
		dir := filepath.Join(f.Hosts[i].Storage, "dbio")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
		l, err := shell.LockTarget(t.Context(), h, dir, ".dbio-lock", `{"pid":1}`)
		if err != nil {
			t.Fatal(err)
		}
		p.locks[h.Name] = append(p.locks[h.Name], l)
	}
	defer p.releaseLocks()
	p.fail(hosts[0].Name, "p1", time.Now(), errors.New("its fio server ended"))
	// Its server is stopped before its targets are let go: no job of this
	// run writes there once another run may.
	if sess.Server(hosts[0].Name).Alive() || !sess.Server(hosts[1].Name).Alive() {
		t.Errorf("after h1 failed: h1's fio server runs %v, h2's %v; want h1's stopped and h2's running",
			sess.Server(hosts[0].Name).Alive(), sess.Server(hosts[1].Name).Alive())
	}
	// Another run takes the failed host's target at once (LockTarget fails
	// at once on a held lock), and finds the live host's still held.
	l, err := shell.LockTarget(t.Context(), hosts[0], dirs[0], ".dbio-lock", `{"pid":2}`)
	if err != nil {
		t.Fatalf("the failed host's target is still held: %v", err)
	}
	l.Release()
	if _, err := shell.LockTarget(t.Context(), hosts[1], dirs[1], ".dbio-lock", `{"pid":2}`); !errors.Is(err, fleet.ErrTargetBusy) {
		t.Errorf("the live host's target: %v, want it held", err)
	}
	if err := p.releaseLocks(); err != nil {
		t.Fatal(err)
	}
	if len(p.locks) != 0 || len(p.live) != 1 || p.live[0].host != hosts[1].Name {
		t.Errorf("locks left after releaseLocks: %v; live hosts %v, want h2 alone", p.locks, p.live)
	}
}
