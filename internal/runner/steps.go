// Package runner executes a plan: its setup once (the targets taken and
// opened, the results directory, a fio pass, the limits, the engine
// started and the workload prepared) and its body in what the setup made
// (user steps with per-second sampling and their consistency checks, a
// goal search, backup cycles, the noisy-neighbour study, tenants on
// hosts), then undoes the setup and finishes the results directory,
// whatever happens on the way.
//
// It is the only package that creates and finishes results directories
// (recorded): a workload run (Run), a disk run (RunDisk) and every run of a
// suite go through it. Each phase writes into the directory it is given: a
// fio pass (FioPhase), then the body's steps, each body through the one
// recording (the tick, the step's index, the sampler, the live feed), with
// their sessions run by vusers.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/analysis"
	"dbio/internal/arrival"
	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/units"
	"dbio/internal/vusers"
	"dbio/internal/workload"
)

// Steps is the body of a workload run: one step of virtual users per
// user count, each a ramp-up and a timed measurement, on the engine the
// setup started, its workload prepared; then the consistency checks.
type Steps struct {
	Users  []int
	RampUp time.Duration
	Step   time.Duration
	// Steady, when set, ends each ramp-up once throughput is steady;
	// RampUp is then the longest it may last.
	Steady *SteadyRampUp
	// Pacing, when set, runs every step open loop.
	Pacing *Pacing
	// Precision, when set, ends each measurement once its figures are
	// precise; Step is then the longest it may last.
	Precision *PrecisionBound
	// StopWhen, when set, is asked after each completed step whether the
	// run has gone far enough (a stepping run whose response time passed
	// its ceiling); the rest of Users is then skipped and why goes to
	// run.json.
	StopWhen func(results.Step) (stop bool, why string)
	// Conclude, when set, draws run-level figures from the steps of a run
	// whose steps all completed, for run.json (e.g. the largest load kept
	// under a ceiling); stopped says whether StopWhen ended the run.
	Conclude func(steps []results.Step, stopped bool) []results.Figure
}

func (s Steps) needs() needs {
	return needs{engine: true, servers: 1, users: s.Users, openLoop: s.Pacing != nil,
		steps: len(s.Users), stepTime: s.RampUp + s.Step, steady: s.Steady, rampUp: s.RampUp,
		precision: s.Precision, step: s.Step, paced: s.Pacing != nil}
}

// describe says which users step, for how long, and how they send their
// transactions when not one after the other.
func (s Steps) describe(p Setup) string {
	users := make([]string, len(s.Users))
	for i, u := range s.Users {
		users[i] = strconv.Itoa(u)
	}
	steps := time.Duration(len(s.Users)) * (s.RampUp + s.Step)
	ramp, most := rampUpText(s.Steady, s.RampUp), ""
	if s.Steady != nil {
		most = "at most "
	}
	measured := s.Step.String() + " measured"
	if s.Precision != nil {
		measured, most = fmt.Sprintf("a measurement until precise (%s) or for %s at most", s.Precision, s.Step), "at most "
	}
	what := fmt.Sprintf("%s on %s, users %s: %s and %s per step, %s%s of steps after the load",
		p.Workload.Name(), p.Engine.Name(), strings.Join(users, ","), ramp, measured, most, steps)
	if m, ok := p.Workload.(workload.Monitored); ok && s.Pacing == nil && len(s.Users) == 1 {
		if pool := m.Pool(s.Users[0]); pool > 0 {
			what += fmt.Sprintf(", the %d users being terminals that key and think, sharing %d connections", s.Users[0], pool)
		}
	}
	if s.Pacing != nil {
		rate := formatRate(s.Pacing.Rate) + " tx/s"
		if s.Pacing.PerUser {
			rate += " per user"
		}
		what += fmt.Sprintf(", open loop at %s (%s arrivals)", rate, s.Pacing.Process)
	}
	return what
}

// rampUpText says how a step ramps up: for rampUp, or until steady and
// for rampUp at most.
func rampUpText(steady *SteadyRampUp, rampUp time.Duration) string {
	if steady != nil {
		return fmt.Sprintf("a ramp-up until steady (%s) or for %s at most", steady, rampUp)
	}
	return fmt.Sprintf("%s ramp-up", rampUp)
}

// configure records nothing of the steps' own: RunConfig records the user
// steps of every run.
func (s Steps) configure(*results.RunConfig) {}

// run runs every step, draws the run's conclusions from them and checks
// the database.
func (s Steps) run(ctx context.Context, ss *session) error {
	stop := func(string) error { return nil }
	if ss.Beside != nil {
		var err error
		if stop, err = ss.Beside.Start(ctx); err != nil {
			return err
		}
	}
	began := ss.env.Now()
	steps, stopped, err := ss.stepper(s).runSteps(ctx)
	ss.stepPhases(steps, began)
	err = errors.Join(err, stop(ss.dir.Path))
	if err := ss.stepsDone(steps, stopped, s.Conclude, err); err != nil {
		return err
	}
	if err := ss.liftCaps(); err != nil {
		return err
	}
	return ss.check(ctx)
}

// Beside is work a run does alongside its user steps: a block I/O
// capture of the devices under its targets.
type Beside interface {
	// Start begins it; the stop it returns ends it and writes what it
	// recorded into the run's results directory, dir.
	Start(ctx context.Context) (stop func(dir string) error, err error)
}

// Background is implemented by workloads whose load includes sessions that
// run beside the virtual users, the same number at every step, such as
// AS3AP's batch jobs: they start before the first step, keep running
// between steps, stop after the last, and what they do in each step's
// measurement counts in that step's figures.
type Background interface {
	// BackgroundSessions is how many background sessions run.
	BackgroundSessions() int
	// NewBackgroundSession starts background session n (0-based).
	NewBackgroundSession(ctx context.Context, inst engine.Instance, n int, rec *metrics.Recorder) (workload.Session, error)
}

// background is the running background sessions of a run.
type background struct {
	recs  []*metrics.Recorder
	users *vusers.Group
}

// lost delivers the error of a background session that could not go on;
// it never fires when the workload has none.
func (bg *background) lost() <-chan error {
	if bg.users == nil {
		return nil
	}
	return bg.users.Lost()
}

func (bg *background) stop() {
	if bg.users != nil {
		bg.users.Stop()
	}
}

// stepper runs Steps of a workload on an instance into a results
// directory, recording them as every phase does (the first step's index,
// the tick, the sampler).
type stepper struct {
	s        Steps
	workload workload.Workload
	inst     engine.Instance
	// startBarrier, when set, is waited for before each step, the first before
	// the background sessions start: a tenant's start barrier (see
	// Setup.Barrier). Whatever a host does between steps (its users
	// finishing their transactions, the step being written), the next
	// starts with the other hosts'.
	startBarrier func(ctx context.Context) error
	// afterStep, when set, is called with each step written (fragment counts).
	afterStep func(results.Step)
	rec       recording
	progress  *progress.Line
	// steps is how many steps the run takes at most, when that is not one
	// per user count (a goal search's probes).
	steps int
	// took is how long each step that ended took to ramp up and measure,
	// from which the time left of the later steps is worked out.
	took []stepTook
}

// stepTook is how long one step's ramp-up and measurement took.
type stepTook struct{ rampUp, measure time.Duration }

// expectedStep is how long a step is expected to ramp up and measure,
// from what the steps so far took: each at its ceiling until a step has
// run, then, for a ramp-up until steady and a measurement until precise,
// the mean of what the steps so far took (never beyond the ceiling), so
// that steps ending early shorten the time the run says is left.
func (st *stepper) expectedStep() (rampUp, measure time.Duration) {
	rampUp, measure = st.s.RampUp, st.s.Step
	if len(st.took) == 0 {
		return rampUp, measure
	}
	var r, m time.Duration
	for _, t := range st.took {
		r, m = r+t.rampUp, m+t.measure
	}
	n := time.Duration(len(st.took))
	if st.s.Steady != nil {
		rampUp = min(r/n, rampUp)
	}
	if st.s.Precision != nil {
		measure = min(m/n, measure)
	}
	return rampUp, measure
}

// stepLeft is the time left of the step in hand, elapsed into it and,
// once measuring, measured into its measurement: what a step is expected
// to take less what has run, and once a phase has run beyond what is
// expected of it, what its ceiling leaves.
func (st *stepper) stepLeft(elapsed time.Duration, measuring bool, measured time.Duration) time.Duration {
	rampUp, measure := st.expectedStep()
	if measuring {
		if measured < measure {
			return measure - measured
		}
		return max(st.s.Step-measured, 0)
	}
	rampLeft := rampUp - elapsed
	if rampLeft <= 0 {
		rampLeft = max(st.s.RampUp-elapsed, 0)
	}
	return rampLeft + measure
}

// stepCount is how many steps the progress line counts.
func (st *stepper) stepCount() int {
	if st.steps > 0 {
		return st.steps
	}
	return len(st.s.Users)
}

// ErrEngineExited reports a database server that died during a run.
var ErrEngineExited = errors.New("database server exited during the run")

// runSteps runs every step in order and returns the steps written, and why
// StopWhen ended the sequence early, if it did. On cancellation or failure
// the step in progress is written with its status and the error says what
// happened.
func (st *stepper) runSteps(ctx context.Context) (done []results.Step, stopped string, err error) {
	if err := st.barrier(ctx); err != nil {
		return nil, "", err
	}
	bg, err := st.startBackground(ctx)
	if err != nil {
		return nil, "", err
	}
	defer bg.stop()
	for i, users := range st.s.Users {
		if i > 0 {
			if err := st.barrier(ctx); err != nil {
				return done, "", err
			}
		}
		load := stepLoad{users: users}
		if p := st.s.Pacing; p != nil {
			load.rate = p.offered(users)
		}
		load.name, load.pool = st.stepName(users, load.rate)
		step, err := st.runStep(ctx, i, load, bg)
		if step != nil {
			st.took = append(st.took, stepTook{rampUp: secondsDuration(step.summary.RampUpS), measure: secondsDuration(step.summary.MeasureS)})
			if werr := st.finishStep(i, step); werr != nil && err == nil {
				err = werr
			}
			done = append(done, step.summary)
		}
		if err != nil {
			return done, "", err
		}
		if st.s.StopWhen != nil {
			if stop, why := st.s.StopWhen(step.summary); stop {
				return done, why, nil
			}
		}
	}
	return done, "", nil
}

// barrier waits at the start barrier, when there is one.
func (st *stepper) barrier(ctx context.Context) error {
	if st.startBarrier == nil {
		return nil
	}
	return st.startBarrier(ctx)
}

// startBackground starts the workload's background sessions, if it has any.
// Their recorders come from a collector of their own; each step's collector
// adopts them.
func (st *stepper) startBackground(ctx context.Context) (*background, error) {
	bg := &background{}
	b, ok := st.workload.(Background)
	if !ok || b.BackgroundSessions() <= 0 {
		return bg, nil
	}
	col := metrics.NewCollector(st.workload.TxTypes())
	users, err := vusers.Start(ctx, vusers.Users{
		N: b.BackgroundSessions(),
		Open: func(ctx context.Context, i int) (vusers.Session, error) {
			rec := col.NewRecorder()
			ss, err := b.NewBackgroundSession(ctx, st.inst, i, rec)
			if err != nil {
				return nil, fmt.Errorf("background session %d: %w", i+1, err)
			}
			bg.recs = append(bg.recs, rec)
			return ss, nil
		},
		Lost: func(err error) error { return fmt.Errorf("background session: %w", err) },
		// Background sessions wait in the poller, whatever GOMAXPROCS is.
		InPoller: true,
	})
	if err != nil {
		return nil, err
	}
	bg.users = users
	return bg, nil
}

type stepResult struct {
	summary results.Step
	hists   map[string]*hdrhistogram.Histogram
	// totals are the step's counts per transaction type.
	totals []metrics.TxCounts
}

// finishStep writes a step that ran and shows it.
func (st *stepper) finishStep(i int, r *stepResult) error {
	err := st.rec.Dir.WriteStep(r.summary, r.hists)
	st.showDone(i, r.summary)
	if st.afterStep != nil {
		st.afterStep(r.summary)
	}
	return err
}

// stepLoad is what one step runs: its users and name, and the total
// offered rate in transactions per second when it runs open loop (0:
// closed loop); pool is the transaction monitor's pool its users share as
// terminals, 0 when each has a connection of its own.
type stepLoad struct {
	users int
	name  string
	rate  float64
	pool  int
}

// stepName names a step of users by what they are: "users-8", or
// "terminals-200" when paced terminals share a transaction monitor's pool
// (a few connections serve them, so "users" would read as connections).
// Results written before this naming keep their "users-N" steps; readers
// tell terminals by the step's pacing record (results.Step.Terminals).
// The pool, asked of the workload here, is the step's (see stepLoad).
func (st *stepper) stepName(users int, rate float64) (string, int) {
	if m, ok := st.workload.(workload.Monitored); ok && rate == 0 {
		if pool := m.Pool(users); pool > 0 {
			return fmt.Sprintf("terminals-%d", users), pool
		}
	}
	return fmt.Sprintf("users-%d", users), 0
}

// runStep starts the step's sessions, ramps up, measures, and stops them. A
// transaction still running when the measurement ends is finished but not
// counted: the totals are taken before the users are told to stop.
func (st *stepper) runStep(ctx context.Context, i int, load stepLoad, bg *background) (*stepResult, error) {
	s := st.s
	index := st.rec.FirstIndex + i
	users, name := load.users, load.name
	tick := st.rec.Tick
	if tick <= 0 {
		tick = time.Second
	}
	warm, err := newWarmup(s.Steady, s.RampUp, tick)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", name, err)
	}
	bound, err := newMeasurement(s.Precision, st.workload, s.Step)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", name, err)
	}
	col := metrics.NewCollector(st.workload.TxTypes())
	for _, r := range bg.recs {
		col.Adopt(r)
	}
	set := vusers.Users{
		N: users,
		Open: func(ctx context.Context, u int) (vusers.Session, error) {
			return st.workload.NewSession(ctx, st.inst, u, col.NewRecorder())
		},
		ShareProcs: sharesProcs(st.workload, st.inst),
	}
	if load.rate > 0 {
		recs := make([]*metrics.Recorder, users)
		set.Open = func(ctx context.Context, u int) (vusers.Session, error) {
			recs[u] = col.NewRecorder()
			return st.workload.NewSession(ctx, st.inst, u, recs[u])
		}
		set.Arrivals = s.Pacing.arrivals(users, load.rate, recs)
	}
	// offered is the step's offered rate: the schedule's, or what its
	// terminals' keying and think times allow when they share a pool.
	offered, pool := load.rate, load.pool
	if m, ok := st.workload.(workload.Monitored); ok && pool > 0 {
		// To the thousandth of a transaction per second: a rate the
		// pacing allows, not one a user typed, shown briefly.
		offered = math.Round(float64(users)*m.TerminalRate()*1000) / 1000
		if set, err = st.monitorSet(m, users, pool, col); err != nil {
			return nil, fmt.Errorf("step %s: %w", name, err)
		}
	}
	load.rate = offered
	group, err := vusers.Start(ctx, set)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", name, err)
	}
	var exited <-chan error
	if e, ok := st.inst.(engine.Exited); ok {
		exited = e.Exited()
	}

	start := st.rec.Now()
	rampEnd := start.Add(s.RampUp)
	measuring := s.RampUp <= 0
	var measureStart time.Time
	if measuring {
		measureStart = start
		st.rec.StartStep()
	}
	lastSample := start
	// A measurement lasts as many ticks as its length holds, counted
	// rather than timed: the tick that begins it is taken a moment after
	// its due time, so a clock reading Step after it falls a few
	// milliseconds short of Step on every other step, and the step ran a
	// tick more than asked (61 s for a minute; 11 s for a precision bound's
	// 10 s minimum).
	measuredTicks := 0
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	var runErr error
	status := results.StatusCompleted
loop:
	for {
		select {
		case <-ctx.Done():
			runErr, status = ctx.Err(), results.StatusInterrupted
			break loop
		case err := <-group.Lost():
			runErr, status = sessionLost(err, exited), results.StatusFailed
			break loop
		case err := <-bg.lost():
			runErr, status = err, results.StatusFailed
			break loop
		case err := <-exited:
			if err == nil {
				err = errors.New("no exit status")
			}
			runErr, status = fmt.Errorf("%w: %v", ErrEngineExited, err), results.StatusFailed
			break loop
		case <-st.rec.Dir.Failed():
			runErr, status = st.rec.Dir.Err(), results.StatusFailed
			break loop
		case <-ticker.C:
		}
		now := st.rec.Now()
		phase := "rampup"
		if measuring {
			phase = "measure"
		}
		row, interval := st.sample(col, name, phase, now, now.Sub(lastSample), load.rate)
		lastSample = now
		if err := st.rec.Dir.Err(); err != nil {
			// What is measured from now on could not be recorded.
			runErr, status = err, results.StatusFailed
			break
		}
		if steadyNow := !measuring && warm.add(row.Values, now.Sub(start)); steadyNow || !measuring && !now.Before(rampEnd) {
			// Ramp-up is over: nothing recorded so far counts.
			st.say(warm.said(name))
			col.Reset()
			st.rec.StartStep()
			measuring, measureStart = true, now
		}
		elapsed := now.Sub(start)
		// The progress line shows the figures since the window began: the
		// ramp-up's start, or the measurement's once it began.
		window, shown := now.Sub(start), progress.WarmUp
		if measuring {
			window, shown = now.Sub(measureStart), progress.Measure
		}
		st.showProgress(i, load, shown, elapsed, st.stepLeft(elapsed, measuring, now.Sub(measureStart)), window, col)
		if measuring && phase == "measure" {
			measuredTicks++
		}
		measuredFor := time.Duration(measuredTicks) * tick
		if measuring && phase == "measure" && bound.add(row.Values, interval, measuredFor) {
			// Every figure is known as precisely as asked: the rest of
			// the step would only narrow intervals nobody asked to narrow.
			break
		}
		if measuring && measuredFor >= s.Step {
			break
		}
	}
	end := st.rec.Now()
	bound.finish(runErr == nil && measuring && time.Duration(measuredTicks)*tick >= s.Step, end.Sub(measureStart))
	st.say(bound.said(name))
	col.Tick()
	totals := col.StepTotals()
	// Users finish the transaction in hand, untimed.
	group.Stop()

	if !measuring {
		// Stopped during ramp-up: nothing was measured, nothing to write.
		return nil, stepError(name, runErr)
	}
	measured := end.Sub(measureStart)
	sum := results.Step{
		Index:    index,
		Name:     name,
		Kind:     st.workload.Name(),
		Users:    users,
		Started:  start,
		Ended:    end,
		RampUpS:  measureStart.Sub(start).Seconds(),
		MeasureS: measured.Seconds(),
		Status:   status,
		Warmup:   warm.record(),
	}
	sum.Precision = bound.record()
	if runErr != nil {
		sum.Error = runErr.Error()
		sum.Notes = append(sum.Notes, "the step did not run its full time: its figures cover the measured part only")
	}
	if n := len(bg.recs); n > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d background sessions ran beside the %d users; the step's figures include their transactions", n, users))
		if load.rate > 0 && pool == 0 {
			sum.Notes = append(sum.Notes, "the background sessions ran closed loop: the offered rate, the late starts and the latency from the intended start are the users' transactions alone, while the service time over all types includes the background's")
		}
	}
	ws := workload.Summarize(st.workload, totals, measured, users)
	for _, f := range ws.Figures {
		sum.Figures = append(sum.Figures, results.Figure(f))
	}
	sum.Transactions, sum.Total = ws.Transactions, &ws.Total
	hists := map[string]*hdrhistogram.Histogram{}
	for t, c := range totals {
		hists[st.workload.TxTypes()[t]] = c.Latency
	}
	if pool > 0 {
		sum.Pacing = workload.OpenLoop(totals, measured, results.ArrivalTerminals, offered, st.tolerance())
		sum.Pacing.Connections = pool
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d terminals shared %d connections through a transaction monitor; the latency from the intended start is each transaction's response time from its submission, the wait for a connection included, and a late start is one that waited longer than %s for a connection", users, pool, st.tolerance()))
	} else if load.rate > 0 {
		sum.Pacing = workload.OpenLoop(totals, measured, s.Pacing.Process.String(), load.rate, s.Pacing.tolerance())
	}
	if load.rate > 0 {
		for t, c := range totals {
			if c.Corrected != nil {
				hists[st.workload.TxTypes()[t]+results.CorrectedSuffix] = c.Corrected
			}
		}
	}
	sum.Telemetry = st.rec.StepTelemetry()
	// Beside the workload's own TPM, the server's count of the same
	// minutes, as HammerDB reads it.
	if _, ok := sum.Figure(results.FigureTPM); ok {
		if f, ok := analysis.EngineTPM(sum.Telemetry); ok {
			sum.Figures = append(sum.Figures, f)
		}
	}
	// The verdict again, knowing the step's sessions and pacing.
	analysis.JudgeStep(&sum)
	return &stepResult{summary: sum, hists: hists, totals: totals}, stepError(name, runErr)
}

// procsSharer is a workload whose sessions on inst share the Ps in force
// instead of each keeping one (vusers.Users.ShareProcs).
type procsSharer interface {
	SharesProcs(inst engine.Instance) bool
}

func sharesProcs(w workload.Workload, inst engine.Instance) bool {
	s, ok := w.(procsSharer)
	return ok && s.SharesProcs(inst)
}

// tolerance is how late a start may be before it counts as late.
func (st *stepper) tolerance() time.Duration {
	if st.s.Pacing != nil {
		return st.s.Pacing.tolerance()
	}
	return Pacing{}.tolerance()
}

// monitorSet is a step's users run as terminals sharing pool connections:
// each connection records on a recorder of its own, so memory grows with
// the pool, not the terminals, and a transaction's wait for a connection is
// counted from its submission.
func (st *stepper) monitorSet(m workload.Monitored, users, pool int, col *metrics.Collector) (vusers.Users, error) {
	terms := make([]vusers.Terminal, users)
	for i := range terms {
		t, err := m.NewTerminal(i)
		if err != nil {
			return vusers.Users{}, err
		}
		terms[i] = monitoredTerminal{t}
	}
	recs := make([]*metrics.Recorder, pool)
	tol := st.tolerance()
	return vusers.Users{
		N:          pool,
		ShareProcs: sharesProcs(st.workload, st.inst),
		Open: func(ctx context.Context, c int) (vusers.Session, error) {
			recs[c] = col.NewRecorder()
			return m.NewConnection(ctx, st.inst, c, recs[c])
		},
		Terminals: &vusers.Terminals{
			N:        users,
			Terminal: func(i int) vusers.Terminal { return terms[i] },
			Begin:    func(c int, t arrival.Timing) { recs[c].Begin(t.Delay(), t.Late(tol)) },
		},
	}, nil
}

// monitoredTerminal runs a workload's terminal on the sessions vusers hands
// it, which are the workload's own pooled connections.
type monitoredTerminal struct{ workload.Terminal }

func (t monitoredTerminal) Run(ctx context.Context, conn vusers.Session) error {
	return t.Terminal.Run(ctx, conn.(workload.Session))
}

// sessionLost explains a session that could not go on. A killed server is
// seen by its clients and by its supervisor at about the same moment; when
// the server did exit, that is the cause to report, not the broken connection.
func sessionLost(err error, exited <-chan error) error {
	if exited == nil {
		return err
	}
	select {
	case xerr, ok := <-exited:
		if !ok {
			return err
		}
		if xerr == nil {
			xerr = errors.New("no exit status")
		}
		return fmt.Errorf("%w: %v (a session saw: %v)", ErrEngineExited, xerr, err)
	case <-time.After(time.Second):
		return err
	}
}

func stepError(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("step %s: %w", name, err)
}

// sample writes one per-second row: the workload's rates and latency over
// the last tick, and the telemetry; offered is the step's offered rate when
// it runs open loop, 0 otherwise. It returns the row and the second's
// counts by transaction type.
func (st *stepper) sample(col *metrics.Collector, step, phase string, now time.Time, elapsed time.Duration, offered float64) (results.SeriesRow, []metrics.TxCounts) {
	row := results.SeriesRow{Time: now, Step: step, Phase: phase}
	interval := col.Tick()
	figs := workload.SecondFigures(st.workload, interval, elapsed)
	if offered > 0 {
		figs = append(figs, workload.PacedSecondFigures(interval, elapsed, offered)...)
	}
	for _, f := range figs {
		row.Values = append(row.Values, results.Sample{Name: string(f.Name), Value: f.Value})
	}
	// A failed write stops the step: runStep finds it in the directory's Err.
	st.rec.AppendRow(row)
	return row, interval
}

// say prints a line above the status line; an empty line prints nothing.
func (st *stepper) say(line string) {
	if line != "" && st.progress != nil {
		st.progress.Printf("%s\n", line)
	}
}

func (st *stepper) showProgress(i int, load stepLoad, phase string, elapsed, remaining, window time.Duration, col *metrics.Collector) {
	if st.progress == nil {
		return
	}
	name, users := load.name, load.users
	totals := col.StepTotals()
	var figs [][2]string
	// Nothing completed yet in this window (the second a measurement
	// starts): show no figures rather than zeros.
	if all := metrics.Merge(totals...); all.Completed() > 0 {
		for _, f := range st.workload.Figures(totals, window) {
			figs = append(figs, [2]string{string(f.Name), units.GroupThousands(int64(math.Round(f.Value)))})
		}
		if load.rate > 0 && all.Corrected != nil {
			figs = append(figs, [2]string{"offered", formatRate(load.rate) + "/s"},
				[2]string{"p99 from intended", fmt.Sprintf("%.1fms", float64(all.Corrected.ValueAtQuantile(99))/1000)})
		}
		figs = append(figs, [2]string{"p99", fmt.Sprintf("%.1fms", float64(all.Latency.ValueAtQuantile(99))/1000)})
	}
	// The steps after this one each take a ramp-up and a measurement, as
	// long as the steps so far suggest.
	rampUp, measure := st.expectedStep()
	later := time.Duration(st.stepCount()-i-1) * (rampUp + measure)
	st.progress.Update(progress.Status{
		Step: i + 1, Steps: st.stepCount(), Name: name, Users: users, Terminals: load.pool > 0, Phase: phase,
		Elapsed: elapsed, Remaining: remaining, RunRemaining: remaining + later, Figures: figs,
	}, st.rec.Now())
}

// showDone leaves a finished step's result on screen: its headline figures
// as recorded, and its status when it did not complete.
func (st *stepper) showDone(i int, s results.Step) {
	if st.progress == nil {
		return
	}
	var figs [][2]string
	for _, f := range s.Figures {
		if f.Name == results.FigureTPMPerUser || f.Name == results.FigureLatencyP99 || f.Name == results.FigureLatencyP99Corrected {
			continue // the per-user share is in the table; p99 is shown in ms below
		}
		figs = append(figs, [2]string{string(f.Name), units.GroupThousands(int64(math.Round(f.Value)))})
	}
	if p := s.Pacing; p != nil {
		figs = append(figs, [2]string{"offered", formatRate(p.OfferedTPS) + "/s"}, [2]string{"achieved", fmt.Sprintf("%.1f/s", p.AchievedTPS)})
		if c := s.Total.Corrected; c != nil && c.Count > 0 {
			figs = append(figs, [2]string{"p99 from intended", fmt.Sprintf("%.1fms", float64(c.P99US)/1000)})
		}
	}
	if s.Total != nil && s.Total.Latency.Count > 0 {
		figs = append(figs, [2]string{"p99", fmt.Sprintf("%.1fms", float64(s.Total.Latency.P99US)/1000)})
	}
	status := ""
	if s.Status != results.StatusCompleted {
		status = string(s.Status)
	}
	st.progress.Done(progress.Status{Step: i + 1, Steps: st.stepCount(), Name: s.Name, Users: s.Users, Terminals: s.Terminals(), Phase: status, Figures: figs})
}

// secondsDuration is a duration recorded in seconds.
func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
