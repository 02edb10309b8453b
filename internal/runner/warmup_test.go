package runner

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/metrics"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/steady"
	"dbio/internal/workload"
)

// idleWorkload's sessions end every transaction in a rollback: a throughput
// of zero, whose deviation in % of its mean is never a number, so it is
// never steady by a percentage.
type idleWorkload struct{ crowdWorkload }

func (w *idleWorkload) Name() string { return "idle" }
func (w *idleWorkload) NewSession(_ context.Context, _ engine.Instance, _ int, rec *metrics.Recorder) (workload.Session, error) {
	return idleSession{rec: rec}, nil
}
func (w *idleWorkload) BackgroundSessions() int { return 0 }

type idleSession struct{ rec *metrics.Recorder }

func (s idleSession) Next(ctx context.Context) error {
	workload.Sleep(ctx, time.Millisecond)
	s.rec.Record(0, time.Millisecond, metrics.RolledBack)
	return nil
}
func (idleSession) Close() error { return nil }

// rampRows counts a step's per-second rows by phase.
func rampRows(t *testing.T, dir, step string) (rampup, measure int) {
	t.Helper()
	l, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range l.Series.Rows {
		if row.Step != step {
			continue
		}
		switch row.Phase {
		case "rampup":
			rampup++
		case "measure":
			measure++
		}
	}
	return rampup, measure
}

// A ramp-up that is to end at steady state ends with the first steady
// window, after exactly the ignored ticks and one window; one that never
// becomes steady lasts its longest. Both say so in the step's record and on
// the terminal. Ticks stand in for seconds, so a window counts ticks.
func TestRampUpUntilSteady(t *testing.T) {
	tick := 10 * time.Millisecond
	tests := []struct {
		name      string
		w         workload.Workload
		criterion string
		// limit is the longest ramp-up: far beyond five ticks where the
		// window must become steady first, however slowly this machine
		// delivers its ticks.
		limit   time.Duration
		reached bool
		// rampRows is the ramp-up's ticks when they are known; 0 when the
		// ramp-up lasts its longest, however many ticks that took.
		rampRows int
		says     string
	}{
		// Any throughput above zero has a slope under 1000 % of its mean
		// over three ticks: the first full window is steady.
		{"steady at the first window", &crowdWorkload{}, "tps_slope:1000%", time.Minute, true, 2 + 3, "users-2: steady after"},
		{"never steady", &idleWorkload{}, "tps:10%", 20 * tick, false, 0, "users-2: not steady within the 200ms ramp-up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := steady.Parse(tt.criterion)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			plan := Plan{Setup: Setup{
				Name: "warmup", Kind: tt.w.Name(), Engine: sqlite.Engine{},
				EngineOptions: engine.Options{Database: "warmup", Fresh: true}, DataPath: t.TempDir(), Workload: tt.w,
				Tick: tick, ResultsBase: t.TempDir(),
			}, Body: Steps{Users: []int{2}, RampUp: tt.limit, Step: 3 * tick,
				Steady: &SteadyRampUp{Criterion: c, Window: 3 * tick, Ignore: 2 * tick}}}
			o, err := Run(context.Background(), plan, Env{Out: io.Discard, Progress: progress.New(&out)})
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Steps) != 1 {
				t.Fatalf("%d steps", len(o.Steps))
			}
			w := o.Steps[0].Warmup
			if w == nil || w.Reached != tt.reached || w.Criterion != tt.criterion || w.LimitS != tt.limit.Seconds() {
				t.Fatalf("warm-up %+v, want reached=%v by %s", w, tt.reached, tt.criterion)
			}
			rampup, measure := rampRows(t, o.Dir, "users-2")
			if tt.rampRows > 0 && rampup != tt.rampRows || measure < 1 {
				t.Errorf("series.csv has %d ramp-up and %d measured rows, want %d ramp-up rows", rampup, measure, tt.rampRows)
			}
			if !tt.reached && o.Steps[0].RampUpS < tt.limit.Seconds() {
				t.Errorf("a ramp-up never steady lasted %v s, want its longest, %v", o.Steps[0].RampUpS, tt.limit.Seconds())
			}
			// The ignored ticks are judged in no window; every later tick ends one.
			if want := max(rampup-2-3+1, 0); w.Windows != want {
				t.Errorf("%d windows judged over %d ramp-up ticks, want %d", w.Windows, rampup, want)
			}
			if tt.reached != (w.AtS > 0) || tt.reached && w.AtS != o.Steps[0].RampUpS {
				t.Errorf("steady at %v s, ramp-up %v s: the measurement begins where steady state was seen", w.AtS, o.Steps[0].RampUpS)
			}
			if tt.reached && (w.Figure == nil || *w.Figure >= 1000 || w.Mean <= 0) {
				t.Errorf("the steady window's figure %v and mean %v", w.Figure, w.Mean)
			}
			if !tt.reached && w.Figure != nil {
				t.Errorf("a window with a mean of zero has a figure %v; a percentage of zero is no number", *w.Figure)
			}
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("terminal does not say %q:\n%s", tt.says, out.String())
			}
		})
	}
}

// The preflight refuses a series the workload does not record and a window
// that cannot fit in the ramp-up, before anything is written.
func TestRampUpUntilProblems(t *testing.T) {
	c, _ := steady.Parse("nopm_slope:1%")
	st := SteadyRampUp{Criterion: c, Window: 20 * time.Second, Ignore: 15 * time.Second}
	ps := st.Problems(&crowdWorkload{}, 30*time.Second)
	var all []string
	for _, p := range ps {
		all = append(all, p.Error())
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"could never be judged within the 30s ramp-up", "crowd records no per-second nopm; use one of tps"} {
		if !strings.Contains(text, want) {
			t.Errorf("problems %q lack %q", text, want)
		}
	}
	st.Criterion, _ = steady.Parse("tps:5%")
	if ps := st.Problems(&crowdWorkload{}, 35*time.Second); len(ps) != 0 {
		t.Errorf("a sound setting has problems: %v", ps)
	}
	plan := Plan{Setup: Setup{
		Name: "x", Kind: "crowd", Engine: sqlite.Engine{}, DataPath: t.TempDir(), Workload: &crowdWorkload{},
		ResultsBase: t.TempDir(),
	}, Body: Steps{Users: []int{1}, RampUp: 10 * time.Second, Step: time.Second, Steady: &st}}
	if _, err := Run(context.Background(), plan, Env{Out: io.Discard}); !IsBadInput(err) || !strings.Contains(err.Error(), "could never be judged") {
		t.Errorf("run with a window longer than its ramp-up: %v, want bad input", err)
	}
}
