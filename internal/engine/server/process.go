// Package server runs the database servers dbio manages itself (PostgreSQL,
// MariaDB): it finds a free loopback port, chooses the unprivileged account a
// server runs as when dbio is root, starts the server in its own session with
// its log in a file, waits until it accepts connections, notices when it dies,
// and shuts it down in order. Engine packages say what to run; this package
// owns how a server process lives and ends.
package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"dbio/internal/execx"
)

// ErrAddressInUse is returned when a server could not start because its port
// was taken between choosing it and binding it; the caller picks another port.
var ErrAddressInUse = errors.New("port already in use")

// Process is a database server that dbio started and supervises.
type Process struct {
	name    string
	proc    execx.Process
	logPath string
	logFrom int64

	done     chan struct{}
	waitErr  error
	exited   chan error
	stopping atomic.Bool
}

// Launch starts c as a long-running server named name (for messages), its
// standard output and error appended to logPath. The server outlives ctx: it
// runs in its own session, so a Ctrl-C reaches dbio alone, and only Stop ends
// it, in the order a database needs. It does not outlive dbio: the kernel
// sends it c.ParentDeathSignal (SIGTERM when not set; a shutdown request for
// a server) when dbio dies, even by SIGKILL, and its environment names dbio's
// PID (OwnerEnv), so that a later dbio can tell a server whose dbio is gone.
func Launch(ctx context.Context, r execx.Runner, name string, c execx.Cmd, logPath string) (*Process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	var from int64
	if fi, err := f.Stat(); err == nil {
		from = fi.Size()
	}
	c.Stdout, c.Stderr = f, f
	c.Setsid = true
	if c.ParentDeathSignal == 0 {
		c.ParentDeathSignal = syscall.SIGTERM
	}
	c.Env = append(slices.Clip(c.Env), OwnerEnv+"="+strconv.Itoa(os.Getpid()))
	proc, err := r.Start(context.WithoutCancel(ctx), c)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{
		name:    name,
		proc:    proc,
		logPath: logPath,
		logFrom: from,
		done:    make(chan struct{}),
		exited:  make(chan error, 1),
	}
	go p.watch(f)
	return p, nil
}

func (p *Process) watch(log *os.File) {
	err := p.proc.Wait()
	log.Close()
	// A server killed from outside can leave its worker processes behind; they
	// live in the session dbio created for it, so they go with it.
	signalGroup(p.proc.PID(), syscall.SIGKILL)
	p.waitErr = err
	close(p.done)
	if !p.stopping.Load() {
		p.exited <- fmt.Errorf("%s (pid %d) exited unexpectedly (%s)%s", p.name, p.proc.PID(), exitStatus(err), p.logSuffix())
	}
	close(p.exited)
}

// PID is the server's main process.
func (p *Process) PID() int { return p.proc.PID() }

// LogPath is the file the server writes its log to.
func (p *Process) LogPath() string { return p.logPath }

// Done is closed when the server process has ended, for whatever reason.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited yields one error if the server ends without Stop having been called,
// then is closed; after Stop it is closed without a value.
func (p *Process) Exited() <-chan error { return p.exited }

// LogTail is the end of what the server logged since this Launch, at most lines lines.
func (p *Process) LogTail(lines int) string { return Tail(p.logPath, p.logFrom, lines) }

func (p *Process) logSuffix() string {
	tail := p.LogTail(20)
	if tail == "" {
		return fmt.Sprintf("; its log %s is empty", p.logPath)
	}
	return fmt.Sprintf("; the end of its log %s:\n%s", p.logPath, tail)
}

// WaitReady polls ready until it succeeds. It fails at once when the server
// exits (with the end of its log, and ErrAddressInUse when the port was taken),
// when ctx ends, or after timeout. Each poll gets its own short deadline.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = ready(pctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			tail := p.LogTail(20)
			if strings.Contains(tail, "Address already in use") {
				return fmt.Errorf("%s: %w:\n%s", p.name, ErrAddressInUse, tail)
			}
			return fmt.Errorf("%s failed to start (%s)%s", p.name, exitStatus(p.waitErr), p.logSuffix())
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to accept connections: %w", p.name, ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("%s did not accept connections within %s (last attempt: %v)%s", p.name, timeout, last, p.logSuffix())
		case <-tick.C:
		}
	}
}

// Stop asks the server to shut down with the signal sig and waits up to
// grace. A server still running after grace, or when ctx ends while waiting,
// gets force, and finally SIGKILL with everything in its session. When ctx has
// already ended on entry (dbio is being interrupted) the server still gets a
// short chance to shut down cleanly, because killing it costs a crash recovery
// on the next start.
func (p *Process) Stop(ctx context.Context, sig, force os.Signal, grace time.Duration) error {
	p.stopping.Store(true)
	select {
	case <-p.done:
		return nil
	default:
	}
	hurry := ctx.Done()
	if ctx.Err() != nil {
		hurry = nil
		grace = min(grace, 10*time.Second)
	}
	if err := p.proc.Signal(sig); err != nil && !p.ended() {
		return fmt.Errorf("stop %s (pid %d): %w", p.name, p.proc.PID(), err)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	reason := fmt.Sprintf("did not shut down within %s", grace)
	select {
	case <-p.done:
		return nil
	case <-hurry:
		reason = "shutdown was cut short: " + ctx.Err().Error()
	case <-t.C:
	}
	_ = p.proc.Signal(force)
	if p.waitFor(10 * time.Second) {
		return fmt.Errorf("%s (pid %d) %s; it was stopped with %v", p.name, p.proc.PID(), reason, force)
	}
	signalGroup(p.proc.PID(), syscall.SIGKILL)
	if p.waitFor(10 * time.Second) {
		return fmt.Errorf("%s (pid %d) %s; it was killed", p.name, p.proc.PID(), reason)
	}
	return fmt.Errorf("%s (pid %d) %s and is still running after SIGKILL", p.name, p.proc.PID(), reason)
}

func (p *Process) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *Process) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// signalGroup signals the process group a server leads (it was started with
// its own session). A pid of 0 or less (a fake process) is never signalled:
// kill(0) would reach dbio's own group.
func signalGroup(pid int, sig syscall.Signal) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, sig)
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
