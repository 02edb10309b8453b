package fio

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/fioformat"
	"dbio/internal/fleet"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/testenv"
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
			logs, err := fioformat.ReadLogs(hostDir)
			if err != nil || len(logs) == 0 {
				t.Errorf("step %s: %s's logs: %v, %d jobs", s.Name, h.Host, err, len(logs))
			}
			// The host's own report holds its job alone.
			b, _ := os.ReadFile(filepath.Join(hostDir, OutputFileName))
			rep, err := fioformat.Parse(bytes.NewReader(b))
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
		var hostSecs [][]fioformat.Second
		for _, h := range fl.Hosts {
			logs, _ := fioformat.ReadLogs(filepath.Join(stepDir, HostsDir, h.Host))
			secs, _ := fioformat.MergeSeconds(logs)
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
		checkFleetTelemetry(t, s, stepDir)
	}
	for _, h := range l.Run.Hosts {
		if h.Status != results.HostOK || len(h.Clock) != 2 || h.Clock[0].At != "start" || h.Clock[1].At != "end" || h.NodeExporter == "" {
			t.Errorf("run.json's host %+v", h)
		}
	}
	if !strings.Contains(out.String(), "fleet: ") || !strings.Contains(out.String(), "h3") {
		t.Errorf("the terminal shows no fleet and host rows:\n%s", out.String())
	}
	f.WaitNoStrays(t)

	// A target a dbio on its own host holds is refused to a fleet run, by
	// the same lock file.
	held, err := target.Open(filepath.Join(f.Hosts[1].Storage, "data"))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := held.Lock(target.HostFS(), target.Holder{PID: os.Getpid(), Command: []string{"dbio", "disk"}, Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	_, err = Run(t.Context(), c, newDir(t, c), 0, execx.Real{}, &out)
	if !errors.Is(err, target.ErrBusy) || !strings.Contains(err.Error(), "h2:") || !strings.Contains(err.Error(), "command: dbio disk") {
		t.Errorf("a fleet run on a held target: %v", err)
	}
	f.WaitNoStrays(t)
}

// checkFleetTelemetry checks a fleet point's telemetry: every host's node
// exporter was read into series.csv in its directory, its CPU shares add
// up to 100, and the fleet's CPU is the mean of the hosts'.
func checkFleetTelemetry(t *testing.T, s results.Step, stepDir string) {
	t.Helper()
	fl := s.Fio.Fleet
	if fl.System == nil || len(fl.System.Hosts) != len(fl.Hosts) {
		t.Fatalf("step %s: fleet telemetry %+v", s.Name, fl.System)
	}
	var user float64
	for _, h := range fl.Hosts {
		sys := h.System
		if sys == nil || h.Telemetry == nil || sys.Seconds < 1 {
			t.Fatalf("step %s: host %s has no telemetry", s.Name, h.Host)
		}
		if total := sys.CPUUserPct + sys.CPUSystemPct + sys.CPUIowaitPct + sys.CPUStealPct + sys.CPUIdlePct; math.Abs(total-100) > 0.01 {
			t.Errorf("step %s: %s's CPU shares add up to %v", s.Name, h.Host, total)
		}
		user += sys.CPUUserPct / float64(len(fl.Hosts))
		series, err := results.ReadSeries(filepath.Join(stepDir, HostsDir, h.Host, "series.csv"))
		if err != nil || len(series.Rows) < sys.Seconds || series.Column("cpu_iowait_pct") < 0 {
			t.Errorf("step %s: %s's series: %v, %d rows, columns %v", s.Name, h.Host, err, len(series.Rows), series.Columns)
		}
	}
	if math.Abs(fl.System.CPUUserPct-user) > 1e-9 {
		t.Errorf("step %s: fleet CPU user %v, the hosts' mean %v", s.Name, fl.System.CPUUserPct, user)
	}
}

func analysisValue(s results.Step, name results.FigureName) float64 {
	for _, f := range s.Figures {
		if f.Name == name {
			return f.Value
		}
	}
	return math.NaN()
}

// TestFleetWithFailingHosts runs the four corners on a fleet in trouble: a
// host no ssh reaches (left out from the start, with ssh's error), a host
// whose node exporter is not where it is said to be (no telemetry from it,
// and the run says so), and a host whose fio server is killed while a point
// runs (failed from that point; the points go on over the others). The
// other hosts' data is kept, the fleet's figures are theirs, and no fio is
// left on any host.
func TestFleetWithFailingHosts(t *testing.T) {
	requireFio(t)
	f := testfleet.Start(t, 3)
	var hosts []fleet.Host
	var targets []string
	for _, h := range f.Hosts {
		host := fleet.Host{Name: h.Name, Destination: h.Name, SSHConfig: f.SSHConfig, WorkDir: h.Storage, FioPort: fleetTestPort}
		if h.Name == "h3" {
			host.NodeExporter = ":9199" // nothing listens there
		}
		hosts = append(hosts, host)
		dir := filepath.Join(h.Storage, "data")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, h.Name+":"+dir)
	}
	hosts = append(hosts, fleet.Host{Name: "hx", Destination: "nosuchalias", SSHConfig: f.SSHConfig, FioPort: fleetTestPort})
	targets = append(targets, "hx:/srv/data")
	c := Config{Profile: "four-corners", Targets: targets, Hosts: hosts, Runtime: 5 * time.Second, Ramp: durp(0), Size: 16 << 20, Jobs: 1, IODepths: []int{4}}
	d := newDir(t, c)
	var out lockedOutput
	type outcome struct {
		pts []results.FioPoint
		err error
	}
	ran := make(chan outcome, 1)
	go func() {
		pts, err := Run(t.Context(), c, d, 0, execx.Real{}, &out)
		ran <- outcome{pts, err}
	}()
	// h2's fio server runs a job: kill the server and its job.
	killed := false
	for !killed {
		select {
		case o := <-ran:
			t.Fatalf("the run ended before h2's server ran a job: %v\n%s", o.err, out.String())
		case <-time.After(50 * time.Millisecond): // polling h2's processes
		}
		left, err := f.Strays(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var pids []int
		for _, p := range left {
			if p.Host == "h2" && strings.Contains(p.Command, "fio --server=") {
				pids = append(pids, p.PID)
			}
		}
		if len(pids) >= 2 {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			killed = true
		}
	}
	o := <-ran
	if o.err != nil {
		t.Fatalf("run: %v\n%s", o.err, out.String())
	}
	if err := d.Finish(results.StatusCompleted, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	t.Logf("output:\n%s", out.String())
	l, err := results.Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]results.FleetHost{}
	for _, h := range l.Run.Hosts {
		status[h.Name] = h
	}
	if h := status["hx"]; h.Status != results.HostFailed || h.FailedStep != "" || !strings.Contains(h.Error, "nosuchalias") {
		t.Errorf("hx: %+v, want failed before the first point with ssh's error", h)
	}
	failedIn := status["h2"].FailedStep
	if h := status["h2"]; h.Status != results.HostFailed || failedIn == "" || !strings.Contains(h.Error, "fio server") {
		t.Errorf("h2: %+v, want failed during a point", h)
	}
	for _, name := range []string{"h1", "h3"} {
		h := status[name]
		if h.Status != results.HostOK || len(h.Clock) != 2 {
			t.Errorf("%s: %+v, want ok with clocks at the start and the end", name, h)
		}
	}
	if h := status["h3"]; !strings.Contains(h.Telemetry, "unreachable") {
		t.Errorf("h3's telemetry: %q, want unreachable", h.Telemetry)
	}
	if len(l.Steps) != len(o.pts) || len(l.Steps) < 4 {
		t.Fatalf("%d steps, %d points", len(l.Steps), len(o.pts))
	}
	before := true
	for _, s := range l.Steps {
		fl := s.Fio.Fleet
		if s.Status != results.StatusCompleted || fl == nil {
			t.Fatalf("step %s: %s (%s)", s.Name, s.Status, s.Error)
		}
		if s.Name == failedIn {
			before = false
		}
		var names []string
		var sum float64
		for _, h := range fl.Hosts {
			names = append(names, h.Host)
			sum += h.Total.IOPS
		}
		want := []string{"h1", "h3"}
		if before {
			want = []string{"h1", "h2", "h3"}
		}
		if !slices.Equal(names, want) {
			t.Errorf("step %s: hosts %v, want %v", s.Name, names, want)
		}
		if math.Abs(s.Fio.Total.IOPS-sum) > 1e-6*sum {
			t.Errorf("step %s: fleet %v IOPS, hosts' sum %v", s.Name, s.Fio.Total.IOPS, sum)
		}
		if !strings.HasPrefix(strings.Join(fl.LeftOut, "; "), "hx: failed before the first point") || (!before && !strings.Contains(strings.Join(fl.LeftOut, "; "), "h2: failed during point "+failedIn)) {
			t.Errorf("step %s: left out %q", s.Name, fl.LeftOut)
		}
		// Telemetry: h1's exporter was read, h3's was not.
		if fl.System == nil || !slices.Equal(fl.System.Hosts, []string{"h1"}) && !slices.Equal(fl.System.Hosts, []string{"h1", "h2"}) {
			t.Errorf("step %s: fleet telemetry %+v", s.Name, fl.System)
		} else if len(fl.System.LeftOut) != 1 || !strings.HasPrefix(fl.System.LeftOut[0], "h3: ") {
			t.Errorf("step %s: telemetry left out %q", s.Name, fl.System.LeftOut)
		}
	}
	for _, want := range []string{"host hx cannot be reached", "host h2 failed", "h3: its node exporter cannot be read"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the run does not say %q", want)
		}
	}
	f.WaitNoStrays(t)
}

// TestFleetWithNoHostReachable fails with a clear message, and records
// every host as failed.
func TestFleetWithNoHostReachable(t *testing.T) {
	requireFio(t)
	testenv.RequireProgram(t, "ssh", "apt-get install -y openssh-client")
	empty := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := []fleet.Host{{Name: "ha", Destination: "nosuchalias-a", SSHConfig: empty}, {Name: "hb", Destination: "nosuchalias-b", SSHConfig: empty}}
	c := Config{Profile: "four-corners", Targets: []string{"ha:/srv/data", "hb:/srv/data"}, Hosts: hosts, Runtime: 5 * time.Second, Size: 16 << 20}
	d := newDir(t, c)
	var out bytes.Buffer
	_, err := Run(t.Context(), c, d, 0, execx.Real{}, &out)
	if !errors.Is(err, fleet.ErrNoHostLeft) || !strings.Contains(err.Error(), "nosuchalias-b") {
		t.Fatalf("run: %v, want no host left naming ssh's errors", err)
	}
	run := d.Run()
	if len(run.Hosts) != 2 || run.Hosts[0].Status != results.HostFailed || run.Hosts[1].Status != results.HostFailed {
		t.Errorf("run.json's hosts: %+v", run.Hosts)
	}
}

// lockedOutput is a run's terminal, read while the run writes it.
type lockedOutput struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *lockedOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *lockedOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// TestRemoteDefaultSize sizes a host's working file from what the host
// says over ssh, by the rule a local target follows: the test host shares
// this machine's memory and disk, so both give the same size (to the
// space other programs take or free meanwhile).
func TestRemoteDefaultSize(t *testing.T) {
	f := testfleet.Start(t, 1)
	h := fleet.Host{Name: "h1", Destination: "h1", SSHConfig: f.SSHConfig}
	dir := f.Hosts[0].Storage
	m := &overSSH{p: newHostsPlace(&runner{exec: execx.Real{}}), host: h}
	sp, err := m.space(t.Context(), dir, filepath.Join(dir, "work.dat"))
	if err != nil {
		t.Fatal(err)
	}
	size, why, err := DefaultSize(sp.memory, sp.free, sp.fsType)
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	fsType, err := exec.Command("stat", "-f", "-c", "%T", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	want, wantWhy, err := DefaultSize(hostMemory(), st.Bavail*uint64(st.Bsize), strings.TrimSpace(string(fsType)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("over ssh: %d (%s); here: %d (%s)", size, why, want, wantWhy)
	if math.Abs(float64(size-want)) > 0.01*float64(want) || why[:20] != wantWhy[:20] {
		t.Errorf("over ssh %d (%s), here %d (%s)", size, why, want, wantWhy)
	}
}

// TestCurveAndPurgeOnHosts runs on a fleet what the fleet once lacked: a
// curve, whose rate is the fleet's (each host's jobs take their share of
// it), and the purge of a host's working file over ssh, which the
// SNIA-style rounds begin with.
func TestCurveAndPurgeOnHosts(t *testing.T) {
	requireFio(t)
	f := testfleet.Start(t, 2)
	var hosts []fleet.Host
	var targets []string
	for _, h := range f.Hosts {
		hosts = append(hosts, fleet.Host{Name: h.Name, Destination: h.Name, SSHConfig: f.SSHConfig, WorkDir: h.Storage, FioPort: fleetTestPort, NodeExporter: fleet.NodeExporterOff})
		dir := filepath.Join(h.Storage, "data")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, h.Name+":"+dir)
	}
	run := func(t *testing.T, c Config) (*results.Loaded, string) {
		t.Helper()
		d := newDir(t, c)
		var out bytes.Buffer
		if _, err := Run(t.Context(), c, d, 0, execx.Real{Proc: "/proc"}, &out); err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
		l := finishAndLoad(t, d)
		return l, out.String()
	}

	t.Run("curve", func(t *testing.T) {
		c := Config{Profile: "curve", Targets: targets, Hosts: hosts, Runtime: 3 * time.Second, Ramp: durp(0), Size: 16 << 20, Jobs: 1, IODepths: []int{4}, RatePcts: []float64{30}}
		l, out := run(t, c)
		if len(l.Steps) != 2 {
			t.Fatalf("%d steps, want the maximum and one rate:\n%s", len(l.Steps), out)
		}
		max, rated := l.Steps[0].Fio, l.Steps[1].Fio
		if rated.RateIOPS != RateFor(max.Total.IOPS, 30) || rated.Fleet == nil || len(rated.Fleet.Hosts) != 2 {
			t.Fatalf("the rated point: %d IOPS asked of %v, fleet %+v", rated.RateIOPS, max.Total.IOPS, rated.Fleet)
		}
		// Each host's job file limits its one job to half the fleet's rate.
		stepDir := results.StepPath(l.Path, rated.Step, rated.Name)
		for _, h := range f.Hosts {
			job, err := os.ReadFile(filepath.Join(stepDir, HostsDir, h.Name, JobFileName))
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("rate_iops=%d\n", (rated.RateIOPS+1)/2); !strings.Contains(string(job), want) {
				t.Errorf("%s's job file does not say %q:\n%s", h.Name, want, job)
			}
		}
		// The fleet keeps to the rate: the sum of the hosts' IOPS, not each host's.
		if got := rated.Total.IOPS; got > 1.1*float64(rated.RateIOPS) || got < 0.5*float64(rated.RateIOPS) {
			t.Errorf("the fleet ran %v IOPS at a rate of %d", got, rated.RateIOPS)
		}
	})

	t.Run("working file", func(t *testing.T) {
		// A host's working file is laid out, purged and found with its holes
		// over ssh as a local one is here: the SNIA-style rounds purge it, and
		// a file a purge left with holes is laid out again.
		p := newHostsPlace(&runner{exec: execx.Real{}, now: time.Now})
		defer p.releaseLocks()
		m := &overSSH{p: p, host: hosts[0]}
		dir := filepath.Join(f.Hosts[0].Storage, "data")
		work, info, _, err := m.workDir(t.Context(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if info.Path != targets[0] || info.Host != "h1" {
			t.Errorf("the target as run.json records it: %+v", info)
		}
		file := filepath.Join(work, workFile)
		const size = 4 << 20
		if err := m.layout(t.Context(), placement{File: file, Size: size, Engine: "psync"}); err != nil {
			t.Fatal(err)
		}
		if sp, err := m.space(t.Context(), dir, file); err != nil || sp.existing != size || sp.allocated < size || sp.free == 0 || sp.memory == 0 {
			t.Fatalf("after the layout: %+v, %v", sp, err)
		}
		note, err := m.purge(t.Context(), file, size)
		if err != nil || !strings.Contains(note, "purged the working file "+file+": 4.0 MiB of its 4.0 MiB deallocated") {
			t.Fatalf("purge: %q, %v", note, err)
		}
		if sp, err := m.space(t.Context(), dir, file); err != nil || sp.existing != size || sp.allocated >= size {
			t.Errorf("after the purge: %+v, %v; want the size kept and the blocks gone", sp, err)
		}
		other := filepath.Join(work, "other.dat")
		if err := os.WriteFile(other, []byte("not the working file"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := m.purge(t.Context(), other, size); err == nil || !strings.Contains(err.Error(), "purges only its own working file") {
			t.Errorf("purging another file: %v", err)
		}
		// fio opens its files by name: a link planted in the place of one is
		// refused before anything is written.
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, file); err != nil {
			t.Fatal(err)
		}
		if _, err := m.space(t.Context(), dir, file); err == nil || !strings.Contains(err.Error(), file+" is a symbolic link") {
			t.Errorf("a link planted at the working file: %v", err)
		}
	})
	f.WaitNoStrays(t)
}
