// Package workload defines what a database workload is to dbio (a schema and
// loader, sessions that run one transaction at a time, consistency checks)
// and the virtual-user plumbing shared by every workload: user sequences and
// pacing.
package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/results"
)

// Workload is a benchmark that runs on an engine instance.
type Workload interface {
	// Name is the registered name, e.g. "tpcc".
	Name() string
	// TxTypes names the transaction types; a session records by index.
	TxTypes() []string
	// Prepare builds the dataset on inst, or, when the run reuses data,
	// keeps one already there whose identity (see CheckReuse) is the
	// run's, refusing one that differs with a *ReuseRefused before it
	// writes anything.
	Prepare(ctx context.Context, inst engine.Instance, log io.Writer) (LoadStats, error)
	// NewSession starts virtual user number user (0-based).
	NewSession(ctx context.Context, inst engine.Instance, user int, rec *metrics.Recorder) (Session, error)
	// Check verifies the dataset's consistency after a run.
	Check(ctx context.Context, inst engine.Instance) ([]CheckResult, error)
	// Figures are the headline numbers of a period, from its transaction counts.
	Figures(counts []metrics.TxCounts, d time.Duration) []results.Figure
	// FigureNames name the figures Figures may return, in its order, each
	// defined in results' catalogue.
	FigureNames() []results.FigureName
}

// Session is one virtual user's connection and state.
type Session interface {
	// Next runs one transaction (with its pacing, if any) and records it. It
	// returns an error only when the session cannot go on (lost connection,
	// crashed server); transaction-level failures are recorded, not returned.
	Next(ctx context.Context) error
	Close() error
}

// Monitored is implemented by a workload whose paced users are terminals
// that reach the database through a transaction monitor (TPC-C's): a step's
// terminals key and think on timers and share a bounded pool of
// connections, borrowing one for each transaction they submit.
type Monitored interface {
	// Pool is how many connections a step of terminals shares; 0 runs
	// every user on a connection of its own, without a monitor.
	Pool(terminals int) int
	// NewTerminal returns terminal user (0-based), holding no connection.
	NewTerminal(user int) (Terminal, error)
	// NewConnection opens pooled connection n (0-based), whose
	// transactions record on rec.
	NewConnection(ctx context.Context, inst engine.Instance, n int, rec *metrics.Recorder) (Session, error)
	// TerminalRate is one terminal's transactions per second when the
	// database answers at once: what its keying and think times allow.
	TerminalRate() float64
}

// Terminal is one terminal of a Monitored workload.
type Terminal interface {
	// Wait draws the terminal's next transaction and returns how long
	// after its last one ended (the step's start, at first) the terminal
	// submits it: its think and keying times.
	Wait() time.Duration
	// Run runs the submitted transaction on conn, a connection the
	// workload's NewConnection opened, recording it there. An error means
	// conn cannot go on.
	Run(ctx context.Context, conn Session) error
}

// LoadStats is how the dataset was built.
type LoadStats struct {
	Rows     int64
	Scale    int
	Duration time.Duration
	Reused   bool
	// Dataset is the identity of the data loaded or reused, as recorded
	// in the database.
	Dataset results.Dataset
}

// CheckResult is one consistency condition's verdict.
type CheckResult struct {
	Name   string
	Passed bool
	Detail string
}

// PerUser is implemented by a workload one of whose figures is also read per
// virtual user (TPC-C's TPM): Summarize adds that figure divided by the
// step's users, named results.PerUser(name).
type PerUser interface {
	PerUserFigure() results.FigureName
}

// ErrSessionLost marks a session that cannot continue, e.g. its server died.
var ErrSessionLost = errors.New("session lost")

// ParseUsers reads a user sequence such as "1,2,3,5,8".
func ParseUsers(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty user sequence: use comma-separated positive counts, e.g. 1,2,3,5,8")
	}
	var users []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("user count %q is not a positive whole number: use comma-separated positive counts, e.g. 1,2,3,5,8", strings.TrimSpace(part))
		}
		if n > 100000 {
			return nil, fmt.Errorf("user count %d is too large (at most 100000)", n)
		}
		users = append(users, n)
	}
	return users, nil
}

// Pacing is the delay around a transaction: keying time before it (the user
// typing the input screen) and think time after it, as in TPC-C 5.2.5.
type Pacing struct {
	Keying    time.Duration
	ThinkMean time.Duration
}

// ThinkTime draws a think time from a negative exponential distribution with
// mean ThinkMean, truncated at ten times the mean (TPC-C 5.2.5.4).
func (p Pacing) ThinkTime(rng *rand.Rand) time.Duration {
	if p.ThinkMean <= 0 {
		return 0
	}
	r := rng.Float64()
	for r == 0 {
		r = rng.Float64()
	}
	t := -math.Log(r) * float64(p.ThinkMean)
	if limit := 10 * float64(p.ThinkMean); t > limit {
		t = limit
	}
	return time.Duration(t)
}

// Sleep waits for d or until ctx ends; it reports whether the full time passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Rebind rewrites a statement written with "?" marks for an engine whose
// placeholders differ (PostgreSQL's $1, $2...); nil keeps the marks.
func Rebind(query string, placeholder func(n int) string) string {
	if placeholder == nil {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString(placeholder(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Summary is a measured period's figures, computed the same way for every
// workload and every caller (a runner step, a scenario's tenant).
type Summary struct {
	// Figures are the workload's own headline figures (each followed by its
	// per-user value when the workload asks for one, see PerUser), then TPS
	// and p99 over every type.
	Figures      []results.Figure
	Transactions []metrics.TxSummary
	Total        metrics.TxSummary
}

// Summarize computes a period's figures from its counts; d is the measured
// time and users the virtual users that ran.
func Summarize(w Workload, counts []metrics.TxCounts, d time.Duration, users int) Summary {
	var s Summary
	per, _ := w.(PerUser)
	for _, f := range w.Figures(counts, d) {
		s.Figures = append(s.Figures, f)
		if per != nil && f.Name == per.PerUserFigure() && users > 0 {
			s.Figures = append(s.Figures, results.PerUser(f.Name).With(f.Value/float64(users)))
		}
	}
	types := w.TxTypes()
	for t, c := range counts {
		s.Transactions = append(s.Transactions, metrics.SummarizeTx(types[t], c, d))
	}
	s.Total = metrics.SummarizeTx("all", metrics.Merge(counts...), d)
	s.Figures = append(s.Figures,
		results.FigureTPS.With(s.Total.PerMinute/60),
		results.FigureLatencyP99.With(float64(s.Total.Latency.P99US)/1000),
	)
	if c := s.Total.Corrected; c != nil {
		s.Figures = append(s.Figures, results.FigureLatencyP99Corrected.With(float64(c.P99US)/1000))
	}
	return s
}

// StepFigureNames name the figures Summarize may write for w, in its
// order: w's own, the per-user one w asks for, and those of every
// workload.
func StepFigureNames(w Workload) []results.FigureName {
	var out []results.FigureName
	per, _ := w.(PerUser)
	for _, n := range w.FigureNames() {
		out = append(out, n)
		if per != nil && n == per.PerUserFigure() {
			out = append(out, results.PerUser(n))
		}
	}
	return append(out, results.FigureTPS, results.FigureLatencyP99, results.FigureLatencyP99Corrected)
}

// OpenLoop is the record of a period run open loop at offered
// transactions per second over d, from its counts; late is the tolerance
// the counts' late transactions were judged by.
func OpenLoop(counts []metrics.TxCounts, d time.Duration, arrival string, offered float64, late time.Duration) *results.Pacing {
	all := metrics.Merge(counts...)
	p := &results.Pacing{Arrival: arrival, OfferedTPS: offered, Transactions: all.Paced, Late: all.Late,
		LateToleranceMS: float64(late) / float64(time.Millisecond)}
	if d > 0 {
		p.AchievedTPS = results.Round6(float64(all.Paced) / d.Seconds())
	}
	return p
}

// PacedSecondFigures are the per-second series values an open-loop period
// adds to SecondFigures: the offered and achieved rates, the transactions
// that started late, and the latency from the intended start.
func PacedSecondFigures(interval []metrics.TxCounts, elapsed time.Duration, offered float64) []results.Figure {
	all := metrics.Merge(interval...)
	achieved := 0.0
	if elapsed > 0 {
		achieved = float64(all.Paced) / elapsed.Seconds()
	}
	figs := []results.Figure{{Name: results.SeriesOfferedTPS, Value: offered}, {Name: results.SeriesAchievedTPS, Value: achieved},
		{Name: results.SeriesLate, Value: float64(all.Late)}}
	if c := all.Corrected; c != nil && c.TotalCount() > 0 {
		figs = append(figs,
			results.Figure{Name: results.SeriesLatencyP50Corrected, Value: float64(c.ValueAtQuantile(50)) / 1000},
			results.Figure{Name: results.SeriesLatencyP99Corrected, Value: float64(c.ValueAtQuantile(99)) / 1000},
		)
	}
	return figs
}

// PacedSecondFigureNames name the figures PacedSecondFigures may write,
// in its order.
func PacedSecondFigureNames() []results.FigureName {
	return []results.FigureName{results.SeriesOfferedTPS, results.SeriesAchievedTPS, results.SeriesLate,
		results.SeriesLatencyP50Corrected, results.SeriesLatencyP99Corrected}
}

// SecondFigures are the per-second series values of an interval: the
// workload's figures, TPS, errors and p50/p99 latency over every type.
// elapsed is the real time the interval covered, not the nominal tick, so
// a late tick does not inflate a rate.
func SecondFigures(w Workload, interval []metrics.TxCounts, elapsed time.Duration) []results.Figure {
	figs := w.Figures(interval, elapsed)
	all := metrics.Merge(interval...)
	tps := 0.0
	if elapsed > 0 {
		tps = float64(all.Committed) / elapsed.Seconds()
	}
	figs = append(figs, results.Figure{Name: results.FigureTPS, Value: tps}, results.Figure{Name: results.FigureSecondErrors, Value: float64(all.Failed)})
	if all.Latency.TotalCount() > 0 {
		figs = append(figs,
			results.Figure{Name: results.FigureSecondLatencyP50, Value: float64(all.Latency.ValueAtQuantile(50)) / 1000},
			results.Figure{Name: results.FigureSecondLatencyP99, Value: float64(all.Latency.ValueAtQuantile(99)) / 1000},
		)
	}
	return figs
}

// SecondFigureNames name the figures SecondFigures may write for w, in
// its order.
func SecondFigureNames(w Workload) []results.FigureName {
	out := append([]results.FigureName(nil), w.FigureNames()...)
	return append(out, results.FigureTPS, results.FigureSecondErrors, results.FigureSecondLatencyP50, results.FigureSecondLatencyP99)
}
