package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"dbio/internal/results"
)

// A fleet's figures line the hosts' seconds up by wall time: each host's
// fio stamps its logs with its own clock. A host whose clock is off by a
// good part of a second shifts its seconds against the others', and the
// common window then pairs seconds that were not measured at the same
// time. dbio cannot set the hosts' clocks; it measures how far each is
// from its own, at the start and at the end of a run, and says so when one
// is further than ClockWarnOffset.

// ClockWarnOffset is the offset above which a run warns: a twentieth of the
// one-second slots the fleet figures are counted in.
const ClockWarnOffset = 50 * time.Millisecond

// ClockTries is how many round trips one measurement makes; the one with
// the shortest round trip gives the offset.
const ClockTries = 5

// clockTimeout bounds one measurement, the ssh connection included.
const clockTimeout = 30 * time.Second

// ClockReading is a host's clock against this machine's.
type ClockReading struct {
	// Measured is when, on this machine's clock.
	Measured time.Time
	// Offset is the host's clock minus this machine's: positive when the
	// host is ahead.
	Offset time.Duration
	// RoundTrip is the round trip of the try the offset comes from: the
	// offset is known to within half of it.
	RoundTrip time.Duration
	Tries     int
}

// Off says whether the reading is beyond ClockWarnOffset even allowing for
// half its round trip.
func (c ClockReading) Off() bool {
	return abs(c.Offset)-c.RoundTrip/2 > ClockWarnOffset
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// clockScript prints "ready" once the session runs, then the host's time
// (seconds.nanoseconds since the epoch) for every line it reads. The ssh
// connection is made once; each try is one line there and back.
const clockScript = `echo ready; while read x; do date +%s.%N; done`

// Clock measures h's clock against now (this machine's clock) over one ssh
// session: tries round trips, each the host's time read between a line
// sent and its answer, set against the middle of the round trip; the
// shortest round trip wins.
func (s Shell) Clock(ctx context.Context, h Host, tries int, now func() time.Time) (ClockReading, error) {
	if tries < 1 {
		tries = 1
	}
	ctx, cancel := context.WithTimeout(ctx, clockTimeout)
	defer cancel()
	lines := make(chan string, tries+2)
	sess, err := s.StartSession(ctx, h, clockScript, SessionOutput{Line: func(l string) {
		select {
		case lines <- strings.TrimSpace(l):
		default: // nobody asked for it: the channel holds what a measurement reads
		}
	}})
	if err != nil {
		return ClockReading{}, err
	}
	defer sess.Stop(5 * time.Second)
	next := func() (string, error) {
		select {
		case l := <-lines:
			return l, nil
		case <-sess.Ended():
			if len(lines) > 0 {
				return <-lines, nil
			}
			return "", fmt.Errorf("host %s (ssh %s): the session ended: %v: %s", h.Name, h.Destination, sess.Err(), strings.TrimSpace(sess.Output()))
		case <-ctx.Done():
			return "", fmt.Errorf("host %s (ssh %s): no answer: %w", h.Name, h.Destination, ctx.Err())
		}
	}
	if l, err := next(); err != nil {
		return ClockReading{}, err
	} else if l != "ready" {
		return ClockReading{}, fmt.Errorf("host %s: the clock session printed %q", h.Name, l)
	}
	best := ClockReading{Tries: tries, RoundTrip: -1}
	for range tries {
		sent := now()
		if err := sess.Send(""); err != nil {
			return ClockReading{}, fmt.Errorf("host %s: %w", h.Name, err)
		}
		l, err := next()
		if err != nil {
			return ClockReading{}, err
		}
		back := now()
		remote, err := parseEpoch(l)
		if err != nil {
			return ClockReading{}, fmt.Errorf("host %s: date +%%s.%%N printed %q: %w", h.Name, l, err)
		}
		rtt := back.Sub(sent)
		if best.RoundTrip < 0 || rtt < best.RoundTrip {
			mid := sent.Add(rtt / 2)
			best.Measured, best.Offset, best.RoundTrip = mid, remote.Sub(mid), rtt
		}
	}
	return best, nil
}

// ClockCheck is every host's clock read at once, at one moment of a run.
type ClockCheck struct {
	// At is the moment: "start" or "end".
	At    string
	Hosts []Host
	// Readings[i] is Hosts[i]'s clock, or Errs[i] why it could not be read.
	Readings []ClockReading
	Errs     []error
}

// CheckClocks reads every host's clock against now (this machine's
// clock), all at once, ClockTries round trips each, and keeps the
// readings under at ("start" or "end").
func (s Shell) CheckClocks(ctx context.Context, hosts []Host, at string, now func() time.Time) ClockCheck {
	c := ClockCheck{At: at, Hosts: hosts, Readings: make([]ClockReading, len(hosts)), Errs: make([]error, len(hosts))}
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { c.Readings[i], c.Errs[i] = s.Clock(ctx, h, ClockTries, now) })
	}
	wg.Wait()
	return c
}

// Record is host i's reading as run.json keeps it; false when its clock
// could not be read.
func (c ClockCheck) Record(i int) (results.ClockOffset, bool) {
	if c.Errs[i] != nil {
		return results.ClockOffset{}, false
	}
	r := c.Readings[i]
	return results.ClockOffset{At: c.At, Measured: r.Measured.UTC(), OffsetMS: millis(r.Offset), RoundTripMS: millis(r.RoundTrip), Tries: r.Tries}, true
}

// Line is the offsets of the hosts read, for the terminal ("clocks at
// the start against this machine's: h1 +0.3 ms, h2 -1.2 ms"); empty when
// no clock could be read.
func (c ClockCheck) Line() string {
	var parts []string
	for i, h := range c.Hosts {
		if c.Errs[i] == nil {
			parts = append(parts, fmt.Sprintf("%s %+.1f ms", h.Name, millis(c.Readings[i].Offset)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("clocks at the %s against this machine's: %s", c.At, strings.Join(parts, ", "))
}

// Warnings are one line per host whose clock could not be read or is Off,
// in the order of the hosts. What that means depends on what the run
// does with the clocks, so the caller says it: unreadTail follows the
// error's context, offTail the offset.
func (c ClockCheck) Warnings(unreadTail, offTail string) []string {
	var out []string
	for i, h := range c.Hosts {
		r := c.Readings[i]
		switch {
		case c.Errs[i] != nil:
			out = append(out, fmt.Sprintf("host %s: its clock could not be read at the %s of the run%s: %v", h.Name, c.At, unreadTail, c.Errs[i]))
		case r.Off():
			out = append(out, fmt.Sprintf("host %s's clock is %.0f ms %s this machine's at the %s of the run (±%.1f ms): %s",
				h.Name, math.Abs(millis(r.Offset)), aheadBehind(r.Offset), c.At, millis(r.RoundTrip)/2, offTail))
		}
	}
	return out
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// aheadBehind words an offset as ClockReading means it: the host's clock
// minus this machine's, positive when the host is ahead.
func aheadBehind(d time.Duration) string {
	if d < 0 {
		return "behind"
	}
	return "ahead of"
}

// parseEpoch reads seconds.nanoseconds since the epoch, as GNU date's
// +%s.%N prints them.
func parseEpoch(s string) (time.Time, error) {
	secs, frac, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok || frac == "" || len(frac) > 9 {
		return time.Time{}, errors.New("want seconds.nanoseconds: the host's date must print nanoseconds (%N, GNU coreutils)")
	}
	sec, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	ns, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(sec, ns), nil
}
