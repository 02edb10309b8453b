package runner

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/execx"
	"dbio/internal/fleet"
	"dbio/internal/metrics"
	"dbio/internal/remote"
	"dbio/internal/results"
	"dbio/internal/testfleet"
	"dbio/internal/workload"
)

// standInArg, first after --, makes this test binary a tenant on a host:
// TestTenantStandIn then runs a real run (the runner's own, on SQLite, of
// a workload of pure logic) held at the start barrier as dbio's is, so
// that the coordinator's side is tested against the runner's.
const standInArg = "tenant-stand-in"

// standInWorkload's sessions commit a transaction of 1 ms every
// millisecond; the first session closed waits pause first, which makes
// its host end the first step late. With fail, the second user (who
// first runs in the second step) loses its session after a second, as a
// server that went away would make it.
type standInWorkload struct {
	pause time.Duration
	fail  bool
	once  sync.Once
}

func (w *standInWorkload) Name() string      { return "standin" }
func (w *standInWorkload) TxTypes() []string { return []string{"tx"} }
func (w *standInWorkload) Prepare(context.Context, engine.Instance, io.Writer) (workload.LoadStats, error) {
	return workload.LoadStats{}, nil
}
func (w *standInWorkload) NewSession(_ context.Context, _ engine.Instance, user int, rec *metrics.Recorder) (workload.Session, error) {
	s := &standInSession{w: w, rec: rec}
	if w.fail && user == 1 {
		s.failAt = time.Now().Add(time.Second)
	}
	return s, nil
}
func (w *standInWorkload) Check(context.Context, engine.Instance) ([]workload.CheckResult, error) {
	return []workload.CheckResult{{Name: "nothing to check", Passed: true}}, nil
}
func (w *standInWorkload) FigureNames() []results.FigureName { return nil }
func (w *standInWorkload) Figures(counts []metrics.TxCounts, d time.Duration) []results.Figure {
	return nil
}

type standInSession struct {
	w      *standInWorkload
	rec    *metrics.Recorder
	failAt time.Time
}

// errStandInLost is the stand-in's lost session.
var errStandInLost = errors.New("the stand-in's session was lost")

func (s *standInSession) Next(ctx context.Context) error {
	if !s.failAt.IsZero() && time.Now().After(s.failAt) {
		return errStandInLost
	}
	workload.Sleep(ctx, time.Millisecond)
	s.rec.Record(0, time.Millisecond, metrics.Committed)
	return nil
}

func (s *standInSession) Close() error {
	s.w.once.Do(func() { time.Sleep(s.w.pause) })
	return nil
}

// TestTenantStandIn is the tenant's side when the binary runs as one
// (arguments after --: standInArg, target, results, name, its pause or
// "fail", and the number of steps, of 1, 2... users); it does nothing in a
// test run of its own.
func TestTenantStandIn(t *testing.T) {
	args := flag.Args()
	if len(args) != 6 || args[0] != standInArg {
		return // only a tenant for the tests below
	}
	w := &standInWorkload{fail: args[4] == "fail"}
	if !w.fail && args[4] != "" {
		var err error
		if w.pause, err = time.ParseDuration(args[4]); err != nil {
			t.Fatal(err)
		}
	}
	steps, err := strconv.Atoi(args[5])
	if err != nil {
		t.Fatal(err)
	}
	var users []int
	for u := range steps {
		users = append(users, u+1)
	}
	b := &remote.Barrier{In: os.Stdin, Out: os.Stdout, Now: time.Now}
	ctx, cancel := b.Watch(context.Background())
	defer cancel()
	plan := Plan{Setup: Setup{
		Name: args[3], Kind: "standin", Engine: sqlite.Engine{},
		EngineOptions: engine.Options{Database: "standin", Fresh: true}, DataPath: args[1], Workload: w,
		ResultsBase: args[2], Barrier: b.Wait,
	}, Body: Steps{Users: users, Step: 3 * time.Second}}
	if _, err := Run(ctx, plan, Env{Out: os.Stdout}); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}

// standInPlan is a run of the stand-in tenant on every host of f, of two
// steps; how gives a host's pause at the end of its first step, or "fail"
// to lose a session in its second, and steps a host's number of steps
// when not two.
func standInPlan(t *testing.T, f *testfleet.Fleet, how map[string]string, steps map[string]int) Plan {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := remote.ReadBinary(exe)
	if err != nil {
		t.Fatal(err)
	}
	var hosts []TenantHost
	for _, h := range f.Hosts {
		target := filepath.Join(h.Storage, "db")
		if err := os.MkdirAll(target, 0o755); err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, TenantHost{Host: fleet.Host{Name: h.Name, Destination: h.Name, SSHConfig: f.SSHConfig}, Target: target})
	}
	return Plan{Setup: Setup{Name: "fleet", Kind: "standin", ResultsBase: t.TempDir()}, Body: Tenants{
		Shell: remote.Shell{Shell: fleet.Shell{Exec: execx.Real{}}}, Binary: bin, Hosts: hosts, Workload: "standin",
		Args: func(h TenantHost, results, name string) []string {
			n, ok := steps[h.Host.Name]
			if !ok {
				n = 2
			}
			return []string{"-test.run=^TestTenantStandIn$", "-test.count=1", "--", standInArg, h.Target, results, name, how[h.Host.Name], strconv.Itoa(n)}
		},
	}}
}

// runStandIns runs p, which must complete, and loads its results; env's
// output is the run's, returned.
func runStandIns(t *testing.T, p Plan, env Env) (*results.Loaded, *watchedOutput) {
	t.Helper()
	out := &watchedOutput{}
	env.Out = out
	o, err := Run(t.Context(), p, env)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	l, err := results.Load(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return l, out
}

// watchedOutput is a run's output, which a test waits on.
type watchedOutput struct {
	mu    sync.Mutex
	b     strings.Builder
	waits map[string]chan struct{}
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	for s, c := range w.waits {
		if strings.Contains(w.b.String(), s) {
			close(c)
			delete(w.waits, s)
		}
	}
	return len(p), nil
}

// seen is closed once the output holds s.
func (w *watchedOutput) seen(s string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := make(chan struct{})
	if strings.Contains(w.b.String(), s) {
		close(c)
		return c
	}
	if w.waits == nil {
		w.waits = map[string]chan struct{}{}
	}
	w.waits[s] = c
	return c
}

func (w *watchedOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestTenantsInterrupted stops the coordinator while its tenants measure,
// as Ctrl-C does (its context cancelled with the signal as cause): the run
// says why and where its results are kept, as a run on one machine does,
// the hosts' runs stop and their results come back, and nothing is left
// on the hosts.
func TestTenantsInterrupted(t *testing.T) {
	f := testfleet.Start(t, 2)
	p := standInPlan(t, f, nil, nil)
	out := &watchedOutput{}
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	signal := errors.New("interrupt signal received")
	go func() {
		select {
		case <-out.seen("start barrier: every host started"):
			cancel(signal)
		case <-ctx.Done():
		}
	}()
	o, err := Run(ctx, p, Env{Out: out})
	if err == nil || o.Status != results.StatusInterrupted {
		t.Fatalf("status %s, error %v; want interrupted:\n%s", o.Status, err, out)
	}
	for _, want := range []string{signal.Error(), "results so far kept in " + o.Dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	l, err := results.Load(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Status != results.StatusInterrupted || !strings.Contains(l.Run.Error, signal.Error()) {
		t.Errorf("run.json: status %s, error %q", l.Run.Status, l.Run.Error)
	}
	for _, h := range l.Run.Tenants.Hosts {
		if h.Dir == "" || h.Status != results.StatusInterrupted {
			t.Errorf("host %s: status %s, results back in %q; want its interrupted run back:\n%s", h.Host, h.Status, h.Dir, out)
		}
	}
	f.WaitNoStrays(t)
}

// TestTenantsStartEveryStepTogether runs two steps on two hosts, one of
// which ends its first step 1.5 s late: the hosts still start the second
// step at one instant, released by the coordinator, and the fleet's window
// is the whole step on both.
func TestTenantsStartEveryStepTogether(t *testing.T) {
	f := testfleet.Start(t, 2)
	const pause = 1500 * time.Millisecond
	p := standInPlan(t, f, map[string]string{"h2": pause.String()}, nil)
	l, out := runStandIns(t, p, Env{})
	if len(l.Steps) != 2 {
		t.Fatalf("%d fleet steps, want 2:\n%s", len(l.Steps), out)
	}
	ten := l.Run.Tenants
	for _, s := range l.Steps {
		fl := s.Fleet
		if fl == nil {
			t.Fatalf("step %s: no fleet detail", s.Name)
		}
		t.Logf("step %s: first seconds %.1f ms apart, window %d s", s.Name, fl.StartSpreadMS, fl.Seconds)
		// Far below the pause: the hosts' own wake-ups and first ticks.
		if fl.StartSpreadMS > 500 {
			t.Errorf("step %s: the hosts' first seconds were %.0f ms apart, want together", s.Name, fl.StartSpreadMS)
		}
		if fl.Seconds < 2 {
			t.Errorf("step %s: a common window of %d s out of 3", s.Name, fl.Seconds)
		}
	}
	checkFleetCounts(t, l.Path, l)
	checkRecomputed(t, l)
	if len(ten.Steps) != 2 {
		t.Fatalf("run.json records %d start barriers, want one per step: %+v", len(ten.Steps), ten.Steps)
	}
	for i, b := range ten.Steps {
		t.Logf("step %d: barrier at %s, skew %.1f ms", i+1, b.At.Format("15:04:05.000"), b.SkewMS)
		if b.SkewMS > 500 || len(b.Hosts) != 2 {
			t.Errorf("step %d: %d hosts started %.0f ms apart, want 2 together", i+1, len(b.Hosts), b.SkewMS)
		}
	}
	if !ten.Steps[1].At.After(ten.Steps[0].At.Add(3 * time.Second)) {
		t.Errorf("the second barrier (%s) is not after the first step", ten.Steps[1].At)
	}
	f.WaitNoStrays(t)
}

// TestTenantsOnTheCoordinatorsClock runs tenants from a coordinator whose
// clock is 20 s behind the hosts' (its Now shifted): the hosts still start
// at the instant the coordinator chose, by its clock, and run.json's
// starts, fleet steps and windows are on the coordinator's clock, with
// each host's measured offset recorded.
func TestTenantsOnTheCoordinatorsClock(t *testing.T) {
	f := testfleet.Start(t, 2)
	const behind = 20 * time.Second
	p := standInPlan(t, f, nil, nil)
	l, _ := runStandIns(t, p, Env{Now: func() time.Time { return time.Now().Add(-behind) }})
	ten := l.Run.Tenants
	for _, h := range ten.Hosts {
		if len(h.Clock) == 0 || h.Clock[0].OffsetMS < 19_000 || h.Clock[0].OffsetMS > 21_000 {
			t.Errorf("host %s: clock readings %+v, want its offset of about +20 s", h.Host, h.Clock)
		}
		// Its wake-up and the offset's error, never the offset itself.
		if h.LateMS < -500 || h.LateMS > 500 {
			t.Errorf("host %s started %.0f ms after the barrier's instant, by the coordinator's clock", h.Host, h.LateMS)
		}
	}
	if len(l.Steps) != 2 || len(ten.Steps) != 2 {
		t.Fatalf("%d steps, %d barriers, want 2", len(l.Steps), len(ten.Steps))
	}
	for i, s := range l.Steps {
		at := ten.Steps[i].At
		if s.Started.Before(at.Add(-500*time.Millisecond)) || s.Started.After(at.Add(time.Second)) {
			t.Errorf("step %s started at %s, its barrier's instant %s: not on one clock", s.Name, s.Started.Format("15:04:05.000"), at.Format("15:04:05.000"))
		}
		fl := s.Fleet
		if fl == nil {
			t.Fatalf("step %s: no fleet detail", s.Name)
		}
		if fl.WindowStart.Before(s.Started) || fl.WindowEnd.After(s.Ended.Add(time.Second)) {
			t.Errorf("step %s: window %s to %s outside the step's %s to %s", s.Name, fl.WindowStart.Format("15:04:05.000"), fl.WindowEnd.Format("15:04:05.000"),
				s.Started.Format("15:04:05.000"), s.Ended.Format("15:04:05.000"))
		}
	}
	checkRecomputed(t, l)
	f.WaitNoStrays(t)
}

// checkRecomputed folds a recorded tenants run again from its hosts'
// directories, as analysis does for a reader: the steps, their
// histograms and the hosts' records come out as the run wrote them.
func checkRecomputed(t *testing.T, l *results.Loaded) {
	t.Helper()
	fold, err := analysis.FoldTenants(l.Path, *l.Run.Tenants, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(fold.Steps) != len(l.Steps) {
		t.Fatalf("recomputed %d steps, the run wrote %d", len(fold.Steps), len(l.Steps))
	}
	for i, fs := range fold.Steps {
		got, _ := json.Marshal(fs.Step)
		want, _ := json.Marshal(l.Steps[i])
		if string(got) != string(want) {
			t.Errorf("step %d recomputed as\n%s\nthe run wrote\n%s", i, got, want)
		}
		written, err := results.StepHistograms(results.StepPath(l.Path, l.Steps[i].Index, l.Steps[i].Name))
		if err != nil {
			t.Fatal(err)
		}
		if len(written) != len(fs.Histograms) || len(written) == 0 {
			t.Errorf("step %d: %d histograms recomputed, %d written", i, len(fs.Histograms), len(written))
		}
		for typ, h := range written {
			if r := fs.Histograms[typ]; r == nil || r.TotalCount() != h.TotalCount() || r.ValueAtQuantile(99) != h.ValueAtQuantile(99) {
				t.Errorf("step %d: the %s histogram recomputed differs from the one written", i, typ)
			}
		}
	}
	got, _ := json.Marshal(fold.Hosts)
	want, _ := json.Marshal(l.Run.Tenants.Hosts)
	if string(got) != string(want) {
		t.Errorf("hosts recomputed as\n%s\nthe run recorded\n%s", got, want)
	}
}

// checkFleetCounts checks that a fleet step's transaction counts are its
// hosts' whole measured steps' summed, and that its note says so beside
// the window its throughput is summed over.
func checkFleetCounts(t *testing.T, dir string, l *results.Loaded) {
	t.Helper()
	for i, s := range l.Steps {
		var committed int64
		for _, h := range l.Run.Tenants.Hosts {
			hl, err := results.Load(filepath.Join(dir, h.Dir))
			if err != nil {
				t.Fatal(err)
			}
			committed += hl.Steps[i].Total.Committed
		}
		if s.Total == nil || s.Total.Committed != committed || committed == 0 {
			t.Errorf("step %s: %+v committed, the hosts' whole steps %d", s.Name, s.Total, committed)
		}
		if !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "counts cover each host's whole measured step") }) {
			t.Errorf("step %s: the notes do not say what the counts cover: %q", s.Name, s.Notes)
		}
	}
}

// TestTenantResultsNotBack: a host's results that cannot be fetched (a
// link replaced the directory dbio made there) are named as left on the
// host, on the terminal and in the host's record, whatever the run's own
// error: an interrupted run's would otherwise hide it.
func TestTenantResultsNotBack(t *testing.T) {
	f := testfleet.Start(t, 1)
	ctx := t.Context()
	h := fleet.Host{Name: "h1", Destination: "h1", SSHConfig: f.SSHConfig}
	shell := remote.Shell{Shell: fleet.Shell{Exec: execx.Real{}}}
	rd, err := shell.MakeResultsDir(ctx, h, "replaced")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(rd.Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), rd.Path); err != nil {
		t.Fatal(err)
	}
	dir, err := results.Create(t.TempDir(), "fleet", results.Run{Kind: "standin"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	out := &watchedOutput{}
	r := &tenantRun{t: Tenants{Shell: shell, Hosts: []TenantHost{{Host: h, Target: "/srv/db"}}}, env: Env{Out: out}, dir: dir,
		rec: results.Tenants{Hosts: []results.TenantHost{{Host: h.Name}}}, remotes: []remote.ResultsDir{rd}}
	if err := r.collect(ctx); err == nil {
		t.Fatal("collect brought back results through a link")
	}
	want := "its results did not come back"
	if got := r.rec.Hosts[0].Error; !strings.Contains(got, want) || !strings.Contains(got, "left on the host, in "+rd.Path) {
		t.Errorf("the host's record says %q, want %q and where they are", got, want)
	}
	if !strings.Contains(out.String(), "warning: host h1: "+want) {
		t.Errorf("the terminal does not say %q:\n%s", want, out)
	}
}

// TestBarrierBeforeEveryStep: a tenant's runner waits at the barrier
// before each of its steps, the first before the workload's background
// sessions start, and a barrier that fails (the coordinator gone) stops
// the run there.
func TestBarrierBeforeEveryStep(t *testing.T) {
	w := &crowdWorkload{}
	var waits []int64 // the background sessions running at each wait
	plan := Plan{Setup: Setup{
		Name: "crowd", Kind: "crowd", Engine: sqlite.Engine{},
		EngineOptions: engine.Options{Database: "crowd", Fresh: true}, DataPath: t.TempDir(), Workload: w,
		Tick: 10 * time.Millisecond, ResultsBase: t.TempDir(),
		Barrier: func(context.Context) error {
			waits = append(waits, w.background.Load())
			if len(waits) == 3 {
				return remote.ErrInputClosed
			}
			return nil
		},
	}, Body: Steps{Users: []int{1, 2, 3}, Step: 30 * time.Millisecond}}
	out, err := Run(t.Context(), plan, Env{Out: io.Discard})
	if !errors.Is(err, remote.ErrInputClosed) {
		t.Fatalf("the third barrier failed, the run ended with %v", err)
	}
	if len(out.Steps) != 2 || !slices.Equal(waits, []int64{0, 2, 2}) {
		t.Errorf("%d steps ran, waits with %v background sessions running; want 2 steps, waits before each step with 0, 2, 2", len(out.Steps), waits)
	}
}

// TestTenantsHostEndsEarly: a host whose run ends after its first step
// (as a stop rule of its own would end it) is not waited for at the
// second barrier: the other host runs its second step alone, the run
// completes, and the fleet's steps are the one both ran.
func TestTenantsHostEndsEarly(t *testing.T) {
	f := testfleet.Start(t, 2)
	p := standInPlan(t, f, nil, map[string]int{"h1": 1})
	l, out := runStandIns(t, p, Env{})
	ten := l.Run.Tenants
	if len(l.Steps) != 1 || len(ten.Steps) != 2 || len(ten.Steps[1].Hosts) != 1 || ten.Steps[1].Hosts[0].Host != "h2" {
		t.Errorf("%d fleet steps, barriers %+v; want 1 fleet step, and h2 alone at the second barrier:\n%s", len(l.Steps), ten.Steps, out)
	}
	for _, h := range ten.Hosts {
		if h.Status != results.StatusCompleted {
			t.Errorf("host %s: %s", h.Host, h.Status)
		}
	}
	f.WaitNoStrays(t)
}

// TestTenantFailsMidRun: a host whose run fails during its second step
// stops the run: the other host is stopped (it keeps its results), both
// hosts' results come back, and the run fails with the failed host's own
// message.
func TestTenantFailsMidRun(t *testing.T) {
	f := testfleet.Start(t, 2)
	p := standInPlan(t, f, map[string]string{"h2": "fail"}, nil)
	out := &watchedOutput{}
	o, err := Run(t.Context(), p, Env{Out: out})
	if err == nil || o.Status != results.StatusFailed || !strings.Contains(err.Error(), "host h2") || !strings.Contains(err.Error(), errStandInLost.Error()) {
		t.Fatalf("status %s, error %v; want failed with h2's lost session:\n%s", o.Status, err, out)
	}
	l, err := results.Load(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]results.Status{"h1": results.StatusInterrupted, "h2": results.StatusFailed}
	for _, h := range l.Run.Tenants.Hosts {
		if h.Dir == "" || h.Status != want[h.Host] {
			t.Errorf("host %s: %s, results back in %q; want %s with its results back", h.Host, h.Status, h.Dir, want[h.Host])
		}
	}
	f.WaitNoStrays(t)
}
