package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/results"
	"dbio/internal/stats"
)

// A suite's expectations are the seed study's findings said as run B's
// figure against run A's. Each is checked here from the recorded results
// alone: the figure is read from the steps a selector picks, once per
// repeat of each run (or per backup cycle, per tenant), and the two sides
// are told apart only beyond the noise those samples show.

// ExpectVerdict is what a suite's runs say about one expected finding.
type ExpectVerdict int

// The verdicts, from no evidence to the finding reproduced.
const (
	// NotMeasured means a side has no value of the figure at the steps
	// selected: the run failed, or did not record the figure.
	NotMeasured ExpectVerdict = iota
	// WithinNoise means the runs do not tell the sides apart: their
	// ranges overlap, or one run against one run differs by less than
	// the floor, or there are too few runs to say.
	WithinNoise
	// NotReproduced means the runs differ beyond the noise the other way.
	NotReproduced
	// Reproduced means the runs differ beyond the noise as the finding says.
	Reproduced
)

// String is the verdict as the summary and the reports print it.
func (v ExpectVerdict) String() string {
	switch v {
	case NotMeasured:
		return "not measured"
	case WithinNoise:
		return "within noise"
	case NotReproduced:
		return "not reproduced"
	case Reproduced:
		return "reproduced"
	}
	return fmt.Sprintf("ExpectVerdict(%d)", int(v))
}

// ExpectCheck is one expectation checked against the runs.
type ExpectCheck struct {
	results.Expectation
	// Metric is the figure compared, with its title and unit.
	Metric Metric
	// SamplesA and SamplesB are the values read on each side: one per
	// repeat of the run, or per step the selector matched.
	SamplesA, SamplesB []float64
	// WhereA and WhereB say which steps the samples came from ("8 users",
	// "backup, 3 cycles").
	WhereA, WhereB string
	// MedianA and MedianB are the sides' medians; Ratio is B / A of them.
	MedianA, MedianB, Ratio float64
	// Verdict is the conclusion, and Reason why, in a few words.
	Verdict ExpectVerdict
	Reason  string
}

// expectMetrics are the figures an expectation may compare, by name: the
// throughput and response times of a workload's steps, the machine's CPU
// and I/O waits, the busiest device's latency, a fio point's figures and a
// backup's duration and speed.
func expectMetrics() []Metric {
	recorded := func(names ...results.FigureName) []Metric {
		var out []Metric
		for _, n := range names {
			out = append(out, FigureMetric(n.Def()))
		}
		return out
	}
	ms := recorded(results.FigureTPM, results.FigureNOPM, results.FigureTPS, results.FigureQPS, results.FigureInteractiveTPS)
	ms = append(ms,
		ResponseTime(results.StatMean),
		ResponseTime(results.StatP95),
		ResponseTime(results.StatP99),
		// iowait is never better or worse (see WorkloadMetrics); a
		// finding states the direction it expects.
		telemetryMetric("cpu-iowait", "CPU iowait", "% of the machine", results.NeitherBetter, "cpu_iowait_pct"),
		telemetryMetric("cpu-idle", "CPU idle", "% of the machine", results.NeitherBetter, "cpu_idle_pct"),
		telemetryMetric("io-pressure", "I/O pressure", "% of the time", results.LowerBetter, "psi_io_some_pct"),
		engineWait("db-sync-wait", "log flush wait", "db_sync"),
		engineWait("db-log-write-wait", "log write wait", "db_log_write"),
		engineWait("db-write-wait", "data write wait", "db_write"),
		engineWait("db-read-wait", "data read wait", "db_read"),
		engineWait("db-data-sync-wait", "data file sync wait", "db_data_sync"),
		diskMetric("disk-write-p99", "disk write latency p99", "w_await_ms"),
		diskMetric("disk-read-p99", "disk read latency p99", "r_await_ms"),
	)
	ms = append(ms, recorded(results.FigureCopySeconds, results.FigureCopyMBPerSec, results.FigureMaxUsersUnderCeiling)...)
	// A replay's step: whether it kept up with the recorded pace and how
	// far behind it ended, its rates and its latencies by direction.
	ms = append(ms, recorded(results.FigureKeptUp, results.FigureBehindS, results.FigurePaceOfSource,
		results.FigureReadIOPS, results.FigureWriteIOPS, results.FigureSyncsPerSec,
		results.FigureReadP50US, results.FigureReadP99US, results.FigureWriteP50US, results.FigureWriteP99US, results.FigureSyncP50US, results.FigureSyncP99US)...)
	for _, m := range FioMetrics() {
		m.ID = "fio-" + m.ID
		m.Title = "fio " + m.Title
		ms = append(ms, m)
	}
	return ms
}

// engineWait compares runs by the mean time the database itself measured
// waiting for one kind of I/O over a step: the step's rate of wait time
// over its rate of operations, from the engine's counters <kind>_wait_ms
// and <kind>_ops (PostgreSQL's track_io_timing, MariaDB's file waits). It
// is I/O latency as the database saw it, which a block-I/O cgroup's delays
// reach and the device's own counters do not.
func engineWait(id, title, kind string) Metric {
	return Metric{ID: id, Title: title, Unit: "ms", Better: results.LowerBetter, Floor: diskLatencyFloorMS,
		Value: func(s results.Step) float64 {
			ops := s.Telemetry.Mean("engine_" + kind + "_ops_per_s")
			if !(ops > 0) {
				return math.NaN()
			}
			return s.Telemetry.Mean("engine_"+kind+"_wait_ms_per_s") / ops
		}}
}

// ExpectFigures names the figures an expectation may compare, sorted.
func ExpectFigures() []string {
	var out []string
	for _, m := range expectMetrics() {
		out = append(out, m.ID)
	}
	sort.Strings(out)
	return out
}

// ExpectMetric is the figure an expectation names; false when none is.
func ExpectMetric(id string) (Metric, bool) {
	for _, m := range expectMetrics() {
		if m.ID == id {
			return m, true
		}
	}
	return Metric{}, false
}

// CheckExpectations checks each expectation against the runs that runs
// returns for a name (every repetition of it, in order).
func CheckExpectations(expect []results.Expectation, runs func(name string) []*results.Loaded) []ExpectCheck {
	out := make([]ExpectCheck, 0, len(expect))
	for _, e := range expect {
		out = append(out, CheckExpectation(e, runs(e.A), runs(e.B)))
	}
	return out
}

// CheckExpectation checks one expectation against run A's repeats and run B's.
func CheckExpectation(e results.Expectation, a, b []*results.Loaded) ExpectCheck {
	c := ExpectCheck{Expectation: e, MedianA: math.NaN(), MedianB: math.NaN(), Ratio: math.NaN()}
	m, ok := ExpectMetric(e.Figure)
	if !ok {
		c.Reason = fmt.Sprintf("dbio has no figure %q", e.Figure)
		return c
	}
	c.Metric = m
	switch {
	case len(a) == 0:
		c.Reason = "run " + e.A + " has no results"
		return c
	case len(b) == 0:
		c.Reason = "run " + e.B + " has no results"
		return c
	}
	// A user count read on both sides is one both ran.
	users := commonUsers(a, b, m)
	if len(users) == 0 && (e.StepA == "largest" || e.StepA == "average" || e.StepB == "largest" || e.StepB == "average") {
		c.Reason = fmt.Sprintf("runs %s and %s have no user count at which both have %s", e.A, e.B, m.Title)
		return c
	}
	c.SamplesA, c.WhereA = samples(a, m, e.StepA, users)
	c.SamplesB, c.WhereB = samples(b, m, e.StepB, users)
	switch {
	case len(c.SamplesA) == 0:
		c.Reason = fmt.Sprintf("run %s has no %s at %s", e.A, m.Title, describeSelector(e.StepA))
		return c
	case len(c.SamplesB) == 0:
		c.Reason = fmt.Sprintf("run %s has no %s at %s", e.B, m.Title, describeSelector(e.StepB))
		return c
	}
	c.MedianA, c.MedianB = median(c.SamplesA), median(c.SamplesB)
	c.Ratio = c.MedianB / c.MedianA
	bound := e.Ratio
	if bound == 0 {
		bound = 1
	}
	// The claim is B below (or above) bound × A: the bound scales A's
	// samples, and the noise rule reads B against them.
	scaled := make([]float64, len(c.SamplesA))
	for i, v := range c.SamplesA {
		scaled[i] = v * bound
	}
	// Samples are runs, or the steps a scenario's selector matched
	// (backup cycles, tenants).
	noun := "runs"
	if !perRun(e.StepA) || !perRun(e.StepB) {
		noun = "steps"
	}
	sep, why := separate(scaled, c.SamplesB, e.Floor, m.Floor, m.Unit, noun)
	if bound != 1 {
		why = fmt.Sprintf("%s, b against %gx a", why, bound)
	}
	want := below
	if e.Relation == results.Higher {
		want = above
	}
	switch {
	case sep == want:
		c.Verdict = Reproduced
	case sep == within:
		c.Verdict = WithinNoise
	default:
		c.Verdict = NotReproduced
	}
	c.Reason = why
	return c
}

// separation is where B's samples lie against A's, noise considered.
type separation int

const (
	within separation = iota
	below
	above
)

// separate is the one place that decides whether B differs from A beyond
// the noise, and how:
//   - with at least stats.RepeatsNeeded samples a side, the Mann-Whitney U
//     test with the spread rule (stats.Compare), as an A/B study reads its
//     repeats;
//   - with at least two a side, the ranges must not overlap;
//   - with one run on either side, the medians must differ by more than
//     floor (a fraction of A's), the noise one run cannot measure.
//
// In every case a difference smaller than the metric's own floor (abs, in
// its unit: 1 % of the machine's CPU) is noise.
func separate(a, b []float64, floor, abs float64, unit, noun string) (separation, string) {
	ma, mb := median(a), median(b)
	dir := below
	if mb > ma {
		dir = above
	}
	if math.Abs(mb-ma) < abs || mb == ma {
		return within, fmt.Sprintf("the difference is under %s %s, too small to tell", strconv.FormatFloat(abs, 'f', -1, 64), unit)
	}
	n := min(len(a), len(b))
	switch {
	case n >= stats.RepeatsNeeded(stats.DefaultAlpha):
		cmp, err := stats.Compare(a, b, stats.Options{})
		if err != nil {
			return within, err.Error()
		}
		if cmp.Verdict != stats.Different {
			return within, fmt.Sprintf("%s (p = %.3g, %d and %d %s)", cmp.Verdict, cmp.Test.P, len(a), len(b), noun)
		}
		return dir, fmt.Sprintf("significant (p = %.3g, %d and %d %s)", cmp.Test.P, len(a), len(b), noun)
	case n >= 2:
		loA, hiA := slices.Min(a), slices.Max(a)
		loB, hiB := slices.Min(b), slices.Max(b)
		if hiB < loA || loB > hiA {
			return dir, fmt.Sprintf("the ranges of %d and %d %s do not overlap", len(a), len(b), noun)
		}
		return within, fmt.Sprintf("the ranges of %d and %d %s overlap", len(a), len(b), noun)
	}
	rel := math.Abs(mb-ma) / math.Abs(ma)
	if ma == 0 || rel > floor {
		return dir, fmt.Sprintf("one against one, beyond the %.0f %% floor", floor*100)
	}
	return within, fmt.Sprintf("one against one, within the %.0f %% floor: repeat the runs", floor*100)
}

// commonUsers are the user counts at which both sides have the figure in
// a completed step, ascending.
func commonUsers(a, b []*results.Loaded, m Metric) []int {
	has := func(runs []*results.Loaded) map[int]bool {
		out := map[int]bool{}
		for _, l := range runs {
			for _, s := range l.Steps {
				if s.Users > 0 && s.Status == results.StatusCompleted && !math.IsNaN(m.Value(s)) {
					out[s.Users] = true
				}
			}
		}
		return out
	}
	ha, hb := has(a), has(b)
	var out []int
	for u := range ha {
		if hb[u] {
			out = append(out, u)
		}
	}
	sort.Ints(out)
	return out
}

// samples reads a side's values of a figure at the steps a selector picks:
// one per run at a user count (the largest both sides ran, or the one
// named), each run's mean over the user counts both ran, or every step of
// a kind or name (each backup cycle, each tenant) in every run.
func samples(runs []*results.Loaded, m Metric, sel string, users []int) ([]float64, string) {
	var out []float64
	atUsers := func(u int) {
		for _, l := range runs {
			var vs []float64
			for _, s := range l.Steps {
				if s.Users == u && s.Status == results.StatusCompleted {
					if v := m.Value(s); !math.IsNaN(v) {
						vs = append(vs, v)
					}
				}
			}
			if len(vs) > 0 {
				out = append(out, Mean(vs))
			}
		}
	}
	switch {
	case sel == "" || sel == "largest":
		if len(users) == 0 {
			return nil, ""
		}
		u := users[len(users)-1]
		atUsers(u)
		return out, usersWords(u) + runsWords(len(out))
	case sel == "average":
		if len(users) == 0 {
			return nil, ""
		}
		for _, byUsers := range stepsPerRun(runs) {
			var vs []float64
			for _, u := range users {
				if v := collect(byUsers[u], m); len(v) > 0 {
					vs = append(vs, Mean(v))
				}
			}
			if len(vs) == len(users) {
				out = append(out, Mean(vs))
			}
		}
		return out, "average over " + intsWords(users) + " users" + runsWords(len(out))
	}
	if u, err := strconv.Atoi(sel); err == nil {
		atUsers(u)
		return out, usersWords(u) + runsWords(len(out))
	}
	if sel == "run" {
		// The figures of the whole run (the largest load kept under a
		// ceiling), read as a step's.
		for _, l := range runs {
			if v := m.Value(results.Step{Figures: l.Run.Figures}); !math.IsNaN(v) {
				out = append(out, v)
			}
		}
		return out, "the whole run" + runsWords(len(out))
	}
	for _, l := range runs {
		for _, s := range l.Steps {
			if s.Status == results.StatusCompleted && stepMatches(s, sel) {
				if v := m.Value(s); !math.IsNaN(v) {
					out = append(out, v)
				}
			}
		}
	}
	return out, fmt.Sprintf("%s, %d %s", sel, len(out), map[bool]string{true: "step", false: "steps"}[len(out) == 1])
}

// perRun says a selector reads one sample per run.
func perRun(sel string) bool {
	if _, err := strconv.Atoi(sel); err == nil {
		return true
	}
	return sel == "" || sel == "largest" || sel == "average" || sel == "run"
}

// stepMatches says a step is of the kind or name a selector gives, or one
// of a phase's steps ("quiet" matches quiet-t1).
func stepMatches(s results.Step, sel string) bool {
	return s.Kind == sel || s.Name == sel || strings.HasPrefix(s.Name, sel+"-")
}

func describeSelector(sel string) string {
	switch {
	case sel == "" || sel == "largest":
		return "the largest user count both ran"
	case sel == "average":
		return "the user counts both ran"
	case sel == "run":
		return "the whole run"
	}
	if _, err := strconv.Atoi(sel); err == nil {
		return usersWords(mustAtoi(sel))
	}
	return "its " + sel + " steps"
}

func mustAtoi(s string) int { n, _ := strconv.Atoi(s); return n }

func usersWords(u int) string {
	if u == 1 {
		return "1 user"
	}
	return strconv.Itoa(u) + " users"
}

func runsWords(n int) string {
	if n == 1 {
		return ", 1 run"
	}
	return fmt.Sprintf(", %d runs", n)
}

func intsWords(vs []int) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ", ")
}

// median is the middle of some values (the mean of the middle two), NaN
// without any.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
