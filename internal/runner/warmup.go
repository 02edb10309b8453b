package runner

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"dbio/internal/results"
	"dbio/internal/steady"
	"dbio/internal/workload"
)

// SteadyRampUp ends each step's ramp-up as soon as the workload's per-second
// throughput is steady, with fio's steady-state semantics (see package
// steady); the plan's RampUp is then the longest a ramp-up may last.
type SteadyRampUp struct {
	// Criterion is the test and the per-second series it reads: "tps:10%",
	// "nopm_slope:0.5%".
	Criterion steady.Criterion
	// Window is how much of the ramp-up is judged together (fio's
	// steadystate_duration).
	Window time.Duration
	// Ignore is the start of each ramp-up left out of every window (fio's
	// steadystate_ramp_time): the seconds in which users log in and caches
	// fill, which no window should have to average away.
	Ignore time.Duration
}

// DefaultSteadyWindow is the window when none is given: long enough for a
// slope over a database's per-second throughput to mean something, short
// enough to fit in the default ramp-ups.
const DefaultSteadyWindow = 20 * time.Second

// String says it the way the terminal and the docs do.
func (s SteadyRampUp) String() string {
	out := fmt.Sprintf("%s over %s", s.Criterion, s.Window)
	if s.Ignore > 0 {
		out += fmt.Sprintf(" after the first %s", s.Ignore)
	}
	return out
}

// Problems checks the setting against the ramp-up it shortens and the
// workload whose series it reads, in words that fit a flag and a suite key
// alike: every problem at once, each with its fix. The criterion's syntax
// and whole seconds are checked where they are typed.
func (s SteadyRampUp) Problems(w workload.Workload, rampUp time.Duration) []error {
	var out []error
	if s.Ignore+s.Window > rampUp {
		out = append(out, fmt.Errorf("steady state (%s) could never be judged within the %s ramp-up: lengthen the ramp-up, the longest it may last, or shorten the window", s, rampUp))
	}
	if w != nil {
		if names := SecondSeries(w); !slices.Contains(names, s.Criterion.Metric) {
			out = append(out, fmt.Errorf("steady-state criterion %s: %s records no per-second %s; use one of %s", s.Criterion, w.Name(), s.Criterion.Metric, strings.Join(names, ", ")))
		}
	}
	return out
}

// SecondSeries are the per-second throughput series of w a steady-state
// criterion can read: the figures w records every second that the
// catalogue lets a criterion judge.
func SecondSeries(w workload.Workload) []string {
	var out []string
	for _, n := range workload.SecondFigureNames(w) {
		if n.Def().Steady && !slices.Contains(out, string(n)) {
			out = append(out, string(n))
		}
	}
	return out
}

// warmup watches one step's ramp-up for steady state. A nil warmup (a
// ramp-up of fixed length) never ends it early and records nothing.
type warmup struct {
	cfg    SteadyRampUp
	limit  time.Duration
	det    *steady.Detector
	last   steady.Status
	judged int
	at     time.Duration
}

// newWarmup prepares the detector for one step; tick is the sampling
// interval, one second outside tests, and the window counts ticks.
func newWarmup(cfg *SteadyRampUp, limit, tick time.Duration) (*warmup, error) {
	if cfg == nil {
		return nil, nil
	}
	det, err := steady.NewDetector(steady.Config{Criterion: cfg.Criterion,
		Window: int(cfg.Window / tick), Ramp: int(cfg.Ignore / tick)})
	if err != nil {
		return nil, err
	}
	return &warmup{cfg: *cfg, limit: limit, det: det}, nil
}

// add feeds one ramp-up row, elapsed after the step started, and says
// whether the window ending with it is the first steady one.
func (w *warmup) add(values []results.Sample, elapsed time.Duration) bool {
	if w == nil || w.at > 0 {
		return false
	}
	v := math.NaN() // a second without the value is never part of a steady window
	for _, s := range values {
		if s.Name == w.cfg.Criterion.Metric {
			v = s.Value
		}
	}
	st := w.det.Add(v)
	if st.Full {
		w.last = st
		w.judged++
	}
	if st.Steady {
		w.at = elapsed
		return true
	}
	return false
}

// record is what the step's summary keeps of its ramp-up.
func (w *warmup) record() *results.SteadyWarmup {
	if w == nil {
		return nil
	}
	r := &results.SteadyWarmup{Criterion: w.cfg.Criterion.String(), WindowS: w.cfg.Window.Seconds(), IgnoredS: w.cfg.Ignore.Seconds(),
		LimitS: w.limit.Seconds(), Reached: w.at > 0, AtS: w.at.Seconds(), Windows: w.judged}
	if w.judged > 0 {
		r.Mean = results.Round6(w.last.Mean)
		if f := w.last.Figure; !math.IsNaN(f) && !math.IsInf(f, 0) {
			f = results.Round6(f)
			r.Figure = &f
		}
	}
	return r
}

// said is the terminal's line when a ramp-up ends: at steady state, or at
// its longest without it.
func (w *warmup) said(step string) string {
	if w == nil {
		return ""
	}
	r := w.record()
	if r.Reached {
		return fmt.Sprintf("%s: steady after %.0f s (%s), measuring", step, r.AtS, describeWindow(w.cfg, r))
	}
	return fmt.Sprintf("%s: not steady within the %s ramp-up (%s), measuring anyway", step, w.limit, describeWindow(w.cfg, r))
}

func describeWindow(cfg SteadyRampUp, r *results.SteadyWarmup) string {
	s := cfg.String()
	if r.Figure == nil {
		return s
	}
	unit := ""
	if cfg.Criterion.Percent {
		unit = " %"
	}
	what := "last window"
	if r.Reached {
		what = "window"
	}
	return fmt.Sprintf("%s; %s at %.3g%s", s, what, *r.Figure, unit)
}
