package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The barrier's lines. A tenant prints readyLine on its output before each
// step (the first once loaded), and startedPrefix with the instant it began
// the step; the coordinator sends startPrefix with the chosen instant (Unix
// nanoseconds) on its input, once every tenant is ready for the step.
const (
	readyLine     = "dbio-barrier: ready"
	startedPrefix = "dbio-barrier: started "
	startPrefix   = "start "
)

// ErrInputClosed is the cause of a tenant's run ending because its input
// closed: the coordinator stopped it, or died, or its ssh did.
var ErrInputClosed = errors.New("the coordinator's connection closed (dbio's input ended)")

// Barrier is the host's side: dbio running as a tenant reads the
// coordinator's instant from In and tells it where it stands on Out.
type Barrier struct {
	In  io.Reader
	Out io.Writer
	Now func() time.Time
	// Sleep waits until an instant or ctx's end; nil waits with a timer.
	Sleep func(ctx context.Context, d time.Duration) error

	once  sync.Once
	start chan time.Time
}

// Watch reads the barrier's input for the whole run: each start line is
// the instant of the step the tenant waits for, and the input's end (or anything it cannot read)
// cancels the returned context with ErrInputClosed, so that the run stops,
// its server stops and dbio exits when the coordinator is gone.
func (b *Barrier) Watch(ctx context.Context) (context.Context, context.CancelFunc) {
	b.once.Do(func() { b.start = make(chan time.Time, 1) })
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		sc := bufio.NewScanner(b.In)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if v, ok := strings.CutPrefix(line, startPrefix); ok {
				if ns, err := strconv.ParseInt(v, 10, 64); err == nil {
					select {
					case b.start <- time.Unix(0, ns):
					default: // a start line the tenant did not wait for is no step's
					}
				}
			}
		}
		cancel(ErrInputClosed)
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// Wait says the tenant is ready for its next step, waits for the
// coordinator's instant and then until that instant, and says when it
// started. It is called before each step. Watch must run first.
func (b *Barrier) Wait(ctx context.Context) error {
	b.once.Do(func() { b.start = make(chan time.Time, 1) })
	if _, err := fmt.Fprintln(b.Out, readyLine); err != nil {
		return fmt.Errorf("start barrier: %w", err)
	}
	var at time.Time
	select {
	case at = <-b.start:
	case <-ctx.Done():
		return fmt.Errorf("start barrier: %w", context.Cause(ctx))
	}
	sleep := b.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	if err := sleep(ctx, at.Sub(b.Now())); err != nil {
		return fmt.Errorf("start barrier: %w", context.Cause(ctx))
	}
	started := b.Now()
	if _, err := fmt.Fprintf(b.Out, "%s%d\n", startedPrefix, started.UnixNano()); err != nil {
		return fmt.Errorf("start barrier: %w", err)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// barrierLine reads one line of a tenant's output: whether it is the
// ready line, or the started line and its instant.
func barrierLine(line string) (ready bool, started time.Time, ok bool) {
	line = strings.TrimRight(line, "\r")
	if line == readyLine {
		return true, time.Time{}, true
	}
	if v, found := strings.CutPrefix(line, startedPrefix); found {
		ns, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return false, time.Time{}, false
		}
		return false, time.Unix(0, ns), true
	}
	return false, time.Time{}, false
}
