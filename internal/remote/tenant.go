package remote

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"dbio/internal/fleet"
)

// Tenant is dbio running on a host for the coordinator, held at the start
// barrier before each of its steps until Release.
type Tenant struct {
	Host fleet.Host

	sess *fleet.Session
	mu   sync.Mutex
	// ready[k] and started[k] close when the tenant is ready for its step
	// k, and when it started it (at startAt[k], by its clock).
	ready, started []chan struct{}
	readies        int
	startAt        []time.Time
	tail           []string
}

// tailLines is how much of a tenant's output an error quotes.
const tailLines = 15

// Start runs program (dbio's copy on the host) with args on h. Each line
// it prints goes to out, prefixed with the host's name, except the
// barrier's own lines. It runs until it ends, until Stop, or until the
// coordinator dies, however it dies: ssh goes with it, and the tenant's
// input closes.
func (s Shell) Start(ctx context.Context, h fleet.Host, program string, args []string, out io.Writer) (*Tenant, error) {
	quoted := make([]string, 0, len(args)+1)
	for _, a := range append([]string{program}, args...) {
		quoted = append(quoted, fleet.ShellQuote(a))
	}
	t := &Tenant{Host: h}
	sess, err := s.StartSession(context.WithoutCancel(ctx), h, "exec "+strings.Join(quoted, " "),
		fleet.SessionOutput{Combined: true, Line: func(line string) { t.line(line, out) }})
	if err != nil {
		return nil, err
	}
	t.sess = sess
	return t, nil
}

func (t *Tenant) line(line string, out io.Writer) {
	ready, at, ok := barrierLine(line)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case ok && ready:
		close(event(&t.ready, t.readies))
		t.readies++
		return
	case ok:
		// A started line answers the last ready line; any other is no step's.
		if k := len(t.startAt); k < t.readies {
			t.startAt = append(t.startAt, at)
			close(event(&t.started, k))
		}
		return
	}
	t.tail = append(t.tail, line)
	if len(t.tail) > tailLines {
		t.tail = t.tail[len(t.tail)-tailLines:]
	}
	if out != nil {
		fmt.Fprintf(out, "  %s: %s\n", t.Host.Name, line)
	}
}

// event is the channel of step k in list, made when first asked for.
// The caller holds t.mu.
func event(list *[]chan struct{}, k int) chan struct{} {
	for len(*list) <= k {
		*list = append(*list, make(chan struct{}))
	}
	return (*list)[k]
}

// Ready is closed once the tenant waits at the barrier before its step k
// (0: the first, once it has loaded).
func (t *Tenant) Ready(k int) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return event(&t.ready, k)
}

// Started is closed once the tenant says it began its step k.
func (t *Tenant) Started(k int) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return event(&t.started, k)
}

// StartedAt is when the tenant began its step k, by its own clock (zero
// before it did).
func (t *Tenant) StartedAt(k int) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k >= len(t.startAt) {
		return time.Time{}
	}
	return t.startAt[k]
}

// Ended is closed once the tenant's ssh session has ended.
func (t *Tenant) Ended() <-chan struct{} { return t.sess.Ended() }

// Err is how the tenant ended (nil: it exited 0), with the end of what it
// printed when it failed. It waits for the end.
func (t *Tenant) Err() error {
	err := t.sess.Err()
	if err == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return fmt.Errorf("host %s: dbio there: %w:\n    %s", t.Host.Name, err, strings.Join(t.tail, "\n    "))
}

// Release sends the tenant the instant at which to start the step it is
// ready for.
func (t *Tenant) Release(at time.Time) error {
	if err := t.sess.Send(fmt.Sprintf("%s%d", startPrefix, at.UnixNano())); err != nil {
		return fmt.Errorf("host %s: sending the start instant: %w", t.Host.Name, err)
	}
	return nil
}

// stopTimeout bounds how long Stop waits for a tenant to stop its run and
// its server once its input closed.
const stopTimeout = 2 * time.Minute

// Stop closes the tenant's input, which ends its run (it keeps its results
// and stops its server), and waits until its session ended; ssh is killed
// if it outlasts stopTimeout. Later calls return at once.
func (t *Tenant) Stop() { t.sess.Stop(stopTimeout) }
