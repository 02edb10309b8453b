package server

// Activity is the loop behind database time by class (results.DBTimeClass),
// written once for the server engines: it samples what the server's
// sessions are doing ten times a second on a connection of its own and
// keeps each class's cumulative active-session seconds, which the engine's
// Stats reports under the classes' counter names. An engine gives only its
// probe: how to connect, and one cheap query that counts the sessions in
// each class (PostgreSQL's, over pg_stat_activity, is in
// engine/postgres/dbtime.go; MariaDB's processlist probe can count its
// active sessions into one class and split them with its own waits).

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ActivityInterval is how often Activity samples: ten samples make each
// second's figure, and a wait shorter than the interval is still seen in
// proportion to how often it happens.
const ActivityInterval = 100 * time.Millisecond

// ActivityEnv is the environment variable that turns the sampling off when
// set to "off", so that its cost can be measured against a run without it
// (make bench); cmd hands the environment down through engine.Options.Getenv.
const ActivityEnv = "DBIO_DB_TIME"

// ActivityOff says whether the environment getenv reads turns the
// sampling off (ActivityEnv=off).
func ActivityOff(getenv func(string) string) bool {
	return getenv != nil && getenv(ActivityEnv) == "off"
}

// activityRetry is how long the loop waits before it reconnects after a
// failed sample: a server being restored, or gone, is not asked ten times
// a second.
const activityRetry = time.Second

// activityMaxWeight is the most time one sample stands for: a loop held up
// longer (a starved machine) does not know what the sessions did meanwhile.
const activityMaxWeight = time.Second

// ActivityProbe samples a server's sessions on a connection of its own.
type ActivityProbe interface {
	// Sample adds the number of sessions it finds in each class right now
	// to sessions, indexed as the Activity's counters.
	Sample(ctx context.Context, sessions []float64) error
	Close()
}

// Activity samples a server's sessions in a goroutine of its own, started
// by the first Read (when telemetry starts) and ended by Stop. Each
// sample adds the time since the previous one times the sessions it found
// in a class to that class's seconds.
type Activity struct {
	counters []string
	connect  func(ctx context.Context) (ActivityProbe, error)
	notice   func(string)
	// interval is how often the loop samples, retry how long it waits to
	// reconnect (tests shorten them).
	interval, retry time.Duration

	mu sync.Mutex
	// seconds are the classes' cumulative active-session seconds.
	seconds []float64
	// sampling says the latest sample succeeded: until then, and after a
	// failure, Read reports no seconds rather than seconds standing still.
	sampling bool
	noticed  bool
	started  bool
	stopped  bool
	cancel   context.CancelFunc
	done     chan struct{}
}

// NewActivity returns the sampler of the classes whose cumulative counters
// are named counters, connecting through connect; notice, when set, hears
// once that sampling failed (engine.Options.Notice).
func NewActivity(counters []string, connect func(ctx context.Context) (ActivityProbe, error), notice func(string)) *Activity {
	return &Activity{counters: counters, connect: connect, notice: notice, interval: ActivityInterval, retry: activityRetry,
		seconds: make([]float64, len(counters)), done: make(chan struct{})}
}

// Read adds each class's cumulative seconds to m under its counter name;
// the first call starts the sampling. While no sample has succeeded (at
// the start, or since the server stopped answering) it adds none: a figure
// missing says more than a zero.
func (a *Activity) Read(m map[string]float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started && !a.stopped {
		a.started = true
		ctx, cancel := context.WithCancel(context.Background())
		a.cancel = cancel
		go a.run(ctx)
	}
	if !a.sampling {
		return
	}
	for i, name := range a.counters {
		m[name] = a.seconds[i]
	}
}

// Stop ends the sampling and waits for its goroutine; a sampler never
// started stays so.
func (a *Activity) Stop() {
	a.mu.Lock()
	a.stopped = true
	cancel := a.cancel
	a.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-a.done
}

// Done is closed once the sampling goroutine has ended; it stays open
// while the goroutine was never started.
func (a *Activity) Done() <-chan struct{} { return a.done }

func (a *Activity) run(ctx context.Context) {
	defer close(a.done)
	var probe ActivityProbe
	defer func() {
		if probe != nil {
			probe.Close()
		}
	}()
	sessions := make([]float64, len(a.counters))
	tick := time.NewTicker(a.interval)
	defer tick.Stop()
	var last time.Time
	for {
		err := ctx.Err()
		if err == nil && probe == nil {
			if probe, err = a.connect(ctx); err != nil {
				probe = nil
			}
		}
		if err == nil {
			clear(sessions)
			at := time.Now()
			if err = probe.Sample(ctx, sessions); err == nil {
				a.add(sessions, at, last)
				last = at
			}
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			// The baseline is lost with the connection: the next sample
			// starts a new one rather than standing for the gap.
			if probe != nil {
				probe.Close()
				probe = nil
			}
			last = time.Time{}
			a.failed(err)
			if !sleep(ctx, a.retry) {
				return
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sleep waits d, or less when ctx ends first, which it reports as false.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// add counts one sample taken at at, the previous one (zero: none) at last.
func (a *Activity) add(sessions []float64, at, last time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sampling = true
	if last.IsZero() {
		return
	}
	dt := min(at.Sub(last), activityMaxWeight).Seconds()
	for i, n := range sessions {
		a.seconds[i] += dt * n
	}
}

func (a *Activity) failed(err error) {
	a.mu.Lock()
	a.sampling = false
	tell := a.notice != nil && !a.noticed
	a.noticed = true
	a.mu.Unlock()
	if tell {
		a.notice(fmt.Sprintf("database time: sampling the server's sessions failed (%v); seconds without a sample have no database time figures, and sampling resumes when the server answers again", err))
	}
}
