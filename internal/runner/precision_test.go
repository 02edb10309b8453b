package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"dbio/internal/arrival"
	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/metrics"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/steady"
	"dbio/internal/workload"
	"dbio/internal/workload/sysbench"
)

// throttledWorkload's sessions run transactions of 1 ms while a throttle is
// off and of 10 ms while it is on, the throttle switching every 200 ms: a
// system whose throughput changes by ten times in mid-step, again and again.
// With once set, the throttle comes on once, that long after the first
// session started, and stays on: a throughput that falls to a tenth in
// mid-step.
type throttledWorkload struct {
	crowdWorkload
	start   time.Time
	once    time.Duration
	started sync.Once
}

func (w *throttledWorkload) Name() string { return "throttled" }
func (w *throttledWorkload) NewSession(_ context.Context, _ engine.Instance, _ int, rec *metrics.Recorder) (workload.Session, error) {
	if w.once > 0 {
		w.started.Do(func() { w.start = time.Now() })
	}
	return throttledSession{w: w, rec: rec}, nil
}
func (w *throttledWorkload) BackgroundSessions() int { return 0 }

type throttledSession struct {
	w   *throttledWorkload
	rec *metrics.Recorder
}

func (s throttledSession) Next(ctx context.Context) error {
	d := time.Millisecond
	if on := time.Since(s.w.start); s.w.once > 0 && on >= s.w.once || s.w.once == 0 && on/(200*time.Millisecond)%2 == 1 {
		d = 10 * time.Millisecond
	}
	workload.Sleep(ctx, d)
	s.rec.Record(0, d, metrics.Committed)
	return nil
}
func (throttledSession) Close() error { return nil }

// A precision-bound step ends as soon as its throughput is precise and
// steady on a steady SQLite run (sysbench's read-only transactions, open
// loop at a fixed rate), and runs to its ceiling when a throttle keeps
// changing the rate, or cuts it once in mid-step; run.json records how each
// ended, the interval reached and the drift the steadiness test judged.
// Ticks stand in for seconds, so batches count ticks.
func TestPrecisionBoundSteps(t *testing.T) {
	tick := 100 * time.Millisecond
	sb := sysbench.DefaultConfig()
	// One query a transaction: a machine whose CPUs other packages'
	// tests keep busy (a load average of 40 once) could not keep 200 a
	// second of read-only's fourteen, fell behind, and was not steady.
	sb.TableSize, sb.Workload = 1000, sysbench.PointSelect
	tests := []struct {
		name      string
		w         workload.Workload
		series    string // the headline, whose drift is judged
		precision string
		pacing    *Pacing
		ended     string
		says      string
	}{
		// Paced at a fixed 200 transactions a second, so that the run is
		// steady however busy the machine's cores are with other work.
		{"steady SQLite run", sysbench.New(sb), "qps", "tps:10%", &Pacing{Process: arrival.Fixed, Rate: 200}, results.PrecisionReached, "users-2: precise after"},
		{"throttle changing in mid-step", &throttledWorkload{start: time.Now()}, "tps", "2%", nil, "", "users-2: not "},
		// Cut to a tenth 20 ticks into a measurement of at least 40: a
		// bound loose enough for the interval alone, so that the
		// steadiness test is what keeps it running.
		{"throttle cutting the rate once in mid-step", &throttledWorkload{once: 20 * tick}, "tps", "50%", nil, results.PrecisionNotSteady, "users-2: not steady at the 6s ceiling (tps drifted -"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each on a SQLite database of its own
			p, err := steady.ParsePrecision(tt.precision)
			if err != nil {
				t.Fatal(err)
			}
			// The ceiling is far beyond the forty ticks a steady run needs.
			ceiling, rampUp := 600*tick, 20*tick
			if tt.ended != results.PrecisionReached {
				ceiling, rampUp = 60*tick, 0
			}
			bound := &PrecisionBound{Precision: p, Min: 40 * tick}
			var out bytes.Buffer
			plan := Plan{Setup: Setup{
				Name: "precision", Kind: tt.w.Name(), Engine: sqlite.Engine{},
				EngineOptions: engine.Options{Database: "precision", Fresh: true}, DataPath: t.TempDir(), Workload: tt.w,
				Tick: tick, ResultsBase: t.TempDir(),
			}, Body: Steps{Users: []int{2}, RampUp: rampUp, Step: ceiling, Pacing: tt.pacing, Precision: bound}}
			o, err := Run(context.Background(), plan, Env{Out: io.Discard, Progress: progress.New(&out)})
			if err != nil {
				t.Fatal(err)
			}
			l, err := results.Load(o.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Steps) != 1 {
				t.Fatalf("%d steps in run.json's directory", len(l.Steps))
			}
			s := l.Steps[0]
			pr := s.Precision
			wantSteady := steady.SteadyText(tt.series, p, 0.95)
			if pr == nil || pr.Asked != tt.precision || pr.Steady != wantSteady || pr.CeilingS != ceiling.Seconds() || pr.MinS != bound.Min.Seconds() || len(pr.Figures) != 1 || pr.Figures[0].Name != "tps" {
				t.Fatalf("step's precision record %+v", pr)
			}
			f := pr.Figures[0]
			reached := "no interval"
			if f.ReachedPct != nil {
				reached = fmt.Sprintf("±%.3g %%", *f.ReachedPct)
			}
			drift := "no line"
			if pr.Drift != nil {
				drift = pr.Drift.Said()
			}
			t.Logf("ended %q after %.2f s: tps %.1f %s from %d batches of %d ticks; %s", pr.Ended, pr.AtS, f.Mean, reached, f.Batches, f.BatchS, drift)
			switch tt.ended {
			case results.PrecisionReached:
				if pr.Ended != tt.ended || !pr.SteadyAtEnd || f.ReachedPct == nil || *f.ReachedPct > 10 || s.MeasureS >= ceiling.Seconds() || pr.AtS < (bound.Min-tick/2).Seconds() {
					t.Errorf("ended %q steady %v at %v s (measured %v s of a %v s ceiling), reached %v %%: want precision reached after the minimum", pr.Ended, pr.SteadyAtEnd, pr.AtS, s.MeasureS, ceiling.Seconds(), f.ReachedPct)
				}
				if *f.Lo > f.Mean || *f.Hi < f.Mean || f.Seconds < 40 {
					t.Errorf("interval [%v, %v] of %d ticks around %v", *f.Lo, *f.Hi, f.Seconds, f.Mean)
				}
				if d, limit := pr.Drift, p.DriftLimit(); d == nil || d.Series != tt.series || d.Batches < 10 || d.HalfPct == nil || *d.HalfPct > limit ||
					math.Abs(d.Pct) > max(*d.HalfPct, limit-*d.HalfPct) {
					t.Errorf("drift %+v: want the steady line judged within ±%v %%", d, limit)
				}
			case results.PrecisionNotSteady:
				// The rate fell to a tenth: the line across the measurement
				// falls by far more than the 100 % a 50 % bound allows, or,
				// on a machine whose other work scatters the ticks, its
				// interval is too wide to call it steady (-243 % ± 260 %
				// once on CI: not significant, and still not steady).
				if pr.Ended != tt.ended || pr.SteadyAtEnd || s.MeasureS < (ceiling-tick/2).Seconds() {
					t.Errorf("ended %q (steady %v) after %v s measured: want not steady at the %v s ceiling", pr.Ended, pr.SteadyAtEnd, s.MeasureS, ceiling.Seconds())
				}
				if d := pr.Drift; d == nil || d.Pct > -50 {
					t.Errorf("drift %+v: want a fall of more than half the mean", d)
				}
			default:
				if pr.Ended != results.PrecisionCeiling && pr.Ended != results.PrecisionNotSteady || s.MeasureS < (ceiling-tick/2).Seconds() {
					t.Errorf("ended %q after %v s measured: want the %v s ceiling", pr.Ended, s.MeasureS, ceiling.Seconds())
				}
				if f.ReachedPct != nil && *f.ReachedPct <= 2 {
					t.Errorf("a throttled rate reached ±%v %%", *f.ReachedPct)
				}
			}
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("terminal does not say %q:\n%s", tt.says, out.String())
			}
		})
	}
}

// The preflight refuses what a precision bound cannot judge, every problem
// with its fix, before anything is written.
func TestPrecisionBoundProblems(t *testing.T) {
	p, err := steady.ParsePrecision("nopm:2%,new_order:p99:10%,tps:5%")
	if err != nil {
		t.Fatal(err)
	}
	b := PrecisionBound{Precision: p, Min: time.Minute}
	var all []string
	for _, e := range b.Problems(&crowdWorkload{}, 30*time.Second, false) {
		all = append(all, e.Error())
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		"the shortest measurement (1m0s) is longer than the step (30s), its ceiling",
		"crowd records no per-second nopm; use one of interactive_mean, tps",
		`crowd has no transaction type "new_order"; use one of interactive, batch`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("problems %q lack %q", text, want)
		}
	}
	if len(all) != 3 {
		t.Errorf("%d problems, want 3: %q", len(all), text)
	}
	p, _ = steady.ParsePrecision("offered_tps:5%")
	if ps := (PrecisionBound{Precision: p}).Problems(&crowdWorkload{}, time.Minute, true); len(ps) != 0 {
		t.Errorf("a paced series of a paced run: %v", ps)
	}
	plan := Plan{Setup: Setup{
		Name: "x", Kind: "crowd", Engine: sqlite.Engine{}, DataPath: t.TempDir(), Workload: &crowdWorkload{},
		ResultsBase: t.TempDir(),
	}, Body: Steps{Users: []int{1}, Step: time.Second, Precision: &b}}
	if _, err := Run(context.Background(), plan, Env{Out: io.Discard}); !IsBadInput(err) || !strings.Contains(err.Error(), "its ceiling") {
		t.Errorf("run with a minimum beyond its ceiling: %v, want bad input", err)
	}
}

// The time left a run's status line shows is worked out again from the
// steps that ran: once a precision-bound step has ended early, the next
// step is expected to take what it took, not its ceiling. Two steady
// steps on SQLite (paced as in TestPrecisionBoundSteps), a minute's
// ceiling each, the first precise after a few seconds.
func TestTimeLeftShrinksWhenAStepEndsPrecise(t *testing.T) {
	tick := 100 * time.Millisecond
	sb := sysbench.DefaultConfig()
	// One query a transaction: a machine whose CPUs other packages'
	// tests keep busy (a load average of 40 once) could not keep 200 a
	// second of read-only's fourteen, fell behind, and was not steady.
	sb.TableSize, sb.Workload = 1000, sysbench.PointSelect
	p, err := steady.ParsePrecision("tps:10%")
	if err != nil {
		t.Fatal(err)
	}
	ceiling, rampUp := 600*tick, 5*tick
	bound := &PrecisionBound{Precision: p, Min: 40 * tick}
	var screen bytes.Buffer
	plan := Plan{Setup: Setup{
		Name: "eta", Kind: "sysbench", Engine: sqlite.Engine{},
		EngineOptions: engine.Options{Database: "eta", Fresh: true}, DataPath: t.TempDir(), Workload: sysbench.New(sb),
		Tick: tick, ResultsBase: t.TempDir(),
	}, Body: Steps{Users: []int{1, 2}, RampUp: rampUp, Step: ceiling, Pacing: &Pacing{Process: arrival.Fixed, Rate: 200}, Precision: bound}}
	o, err := Run(context.Background(), plan, Env{Out: io.Discard, Progress: progress.NewTerminal(&screen, 400)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := results.Load(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Steps) != 2 || l.Steps[0].Precision == nil || l.Steps[0].Precision.Ended != results.PrecisionReached {
		t.Fatalf("the first step did not end precise: %+v", l.Steps)
	}
	first := l.Steps[0]
	// The first status line of each step: "step 1/2 users-1 [warm-up] 0:00
	// elapsed, 1:02 left (run 2:04 left)".
	status := regexp.MustCompile(`step (\d)/2 users-\d \[[a-z-]+\] (\d+):(\d\d) elapsed, (\d+):(\d\d) left(?: \(run (\d+):(\d\d) left\))?`)
	seconds := func(m, s string) time.Duration {
		mi, _ := strconv.Atoi(m)
		si, _ := strconv.Atoi(s)
		return time.Duration(mi*60+si) * time.Second
	}
	firstLeft := map[string]time.Duration{}
	var runLeft time.Duration
	for _, line := range strings.FieldsFunc(screen.String(), func(r rune) bool { return r == '\r' || r == '\n' }) {
		m := status.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, seen := firstLeft[m[1]]; seen {
			continue
		}
		firstLeft[m[1]] = seconds(m[4], m[5])
		if m[1] == "1" && m[6] != "" {
			runLeft = seconds(m[6], m[7])
		}
	}
	// At the start, both steps at their ceilings: about two minutes.
	if want := 2*(rampUp+ceiling) - 2*time.Second; runLeft < want {
		t.Errorf("the run's first status line says %s left, want at least %s (both steps at their ceilings):\n%s", runLeft, want, screen.String())
	}
	// Once the first has ended precise, the second is expected to take
	// what it took (each time shown to the second).
	took := secondsDuration(first.RampUpS + first.MeasureS)
	if left, ok := firstLeft["2"]; !ok || left > took+2*time.Second {
		t.Errorf("the second step's first status line says %s left (seen %v), want at most %s, what the first took (it ended precise after %.1f s of a %s ceiling)", left, ok, took+2*time.Second, first.MeasureS, ceiling)
	}
	t.Logf("run left at the start %s; the second step's left at its start %s, the first took %s", runLeft, firstLeft["2"], took)
}
