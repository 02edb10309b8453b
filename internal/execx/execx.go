// Package execx runs the external programs dbio drives (fio, initdb, pg_ctl,
// mariadbd, pg_basebackup, mariadb-backup...) with a context, captured output
// and an optional unprivileged user, behind an interface that tests can fake.
package execx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Cmd is one program invocation.
type Cmd struct {
	Name string
	Args []string
	Dir  string
	// Env is added to the parent's environment.
	Env []string
	// Stdin, when set, feeds the program.
	Stdin io.Reader
	// Stdout and Stderr, when set, receive the output as it comes in addition to capture.
	Stdout io.Writer
	Stderr io.Writer
	// UID and GID, when UID is non-zero, run the program as that user (dbio runs
	// servers unprivileged when it is started as root).
	UID, GID uint32
	// Setsid puts the program in its own session so that a Ctrl-C sent to
	// dbio's process group reaches dbio alone, which then stops it in order.
	// Run kills what the program leaves behind when it ends (see leftBehind).
	Setsid bool
	// ParentDeathSignal, when non-zero, is sent to the program by the kernel
	// when dbio dies, however it dies (even SIGKILL), so that a program that
	// must not outlive dbio (a database server in its own session) ends too.
	ParentDeathSignal syscall.Signal
	// Interrupt, when closed while the program runs, sends it SIGINT: the
	// way to end early a program that finishes its work in order on it
	// (fio stops its jobs and still writes its report), which cancelling
	// the context, a kill, would lose.
	Interrupt <-chan struct{}
}

// String renders the command line for messages and logs.
func (c Cmd) String() string {
	return strings.TrimSpace(c.Name + " " + strings.Join(c.Args, " "))
}

// Result is what a finished program left.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	Duration time.Duration
}

// Runner runs programs. Real returns the host implementation.
type Runner interface {
	// Run runs c to completion. A non-zero exit is an *ExitError carrying stderr.
	Run(ctx context.Context, c Cmd) (Result, error)
	// Start starts c in the background.
	Start(ctx context.Context, c Cmd) (Process, error)
	// LookPath finds a program in PATH.
	LookPath(name string) (string, error)
}

// Process is a program started in the background.
type Process interface {
	PID() int
	// Wait blocks until the program ends.
	Wait() error
	// Signal sends sig to the program.
	Signal(sig os.Signal) error
}

// ExitError reports a program that failed, with the tail of what it said.
type ExitError struct {
	Cmd      string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if len(msg) > 2000 {
		msg = "..." + msg[len(msg)-2000:]
	}
	if msg == "" {
		return fmt.Sprintf("%s: %v", e.Cmd, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", e.Cmd, e.Err, msg)
}

func (e *ExitError) Unwrap() error { return e.Err }

// Real runs programs on the host. Proc is the host's /proc (given by the
// process that creates the Real), where Run looks, once a program run in a
// session of its own has ended, for the copies of it that left its process
// group; empty leaves them (its group is still killed).
type Real struct{ Proc string }

var _ Runner = Real{}

func (Real) command(ctx context.Context, c Cmd) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	cmd.Stdin = c.Stdin
	attr := &syscall.SysProcAttr{Setsid: c.Setsid, Pdeathsig: c.ParentDeathSignal}
	if c.UID != 0 {
		attr.Credential = &syscall.Credential{Uid: c.UID, Gid: c.GID}
	}
	cmd.SysProcAttr = attr
	// A program that ignores cancellation gets SIGTERM, then SIGKILL after a grace period.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// Run implements Runner.
func (r Real) Run(ctx context.Context, c Cmd) (Result, error) {
	cmd := r.command(ctx, c)
	var out, errb bytes.Buffer
	cmd.Stdout = tee(&out, c.Stdout)
	cmd.Stderr = tee(&errb, c.Stderr)
	start := time.Now()
	p := startOn(cmd, c.ParentDeathSignal != 0)
	swept := make(chan struct{})
	if c.Setsid && p.startErr == nil {
		// Left-behind processes keep the output pipes open, and Wait for
		// them (up to WaitDelay): they go as soon as the program has ended.
		pid := cmd.Process.Pid
		go func() {
			defer close(swept)
			waitExited(pid)
			leftBehind(pid, c, r.Proc)
		}()
	} else {
		close(swept)
	}
	if c.Interrupt != nil && p.startErr == nil {
		ended := make(chan struct{})
		defer close(ended)
		go func() {
			select {
			case <-c.Interrupt:
				_ = cmd.Process.Signal(os.Interrupt)
			case <-ended:
			}
		}()
	}
	err := p.wait()
	<-swept
	res := Result{Stdout: out.Bytes(), Stderr: errb.Bytes(), Duration: time.Since(start)}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			res.ExitCode = ee.ExitCode()
		}
		if ctx.Err() != nil {
			return res, fmt.Errorf("%s: %w", c.String(), ctx.Err())
		}
		return res, &ExitError{Cmd: c.String(), ExitCode: res.ExitCode, Stderr: errb.String() + out.String(), Err: err}
	}
	return res, nil
}

// Start implements Runner.
func (r Real) Start(ctx context.Context, c Cmd) (Process, error) {
	cmd := r.command(ctx, c)
	cmd.Stdout = c.Stdout
	cmd.Stderr = c.Stderr
	p := startOn(cmd, c.ParentDeathSignal != 0)
	if err := p.startErr; err != nil {
		return nil, fmt.Errorf("start %s: %w", c.String(), err)
	}
	return p, nil
}

// waitExited returns once process pid (a child) has ended, without reaping
// it: Wait still collects its status. It also returns when pid is no longer
// a child (already reaped).
func waitExited(pid int) {
	const pPID = 1     // waitid's idtype for one process
	var info [128]byte // a siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}

// leftBehind kills, once a program run in its own session (PID pid) has
// ended, the processes it started that outlive it: those still in its
// process group (whose id lives on while they do, so nothing else is
// reached), and copies of itself in the working directory it was given,
// which left the group (fio's jobs each start a session of their own and,
// orphaned by a killed fio before their I/O begins, wait forever), found
// through proc, the host's /proc.
func leftBehind(pid int, c Cmd, proc string) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if c.Dir == "" || proc == "" {
		return
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return
	}
	entries, _ := os.ReadDir(proc)
	for _, e := range entries {
		other, err := strconv.Atoi(e.Name())
		if err != nil || other == os.Getpid() {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(proc, e.Name(), "comm"))
		cwd, _ := os.Readlink(filepath.Join(proc, e.Name(), "cwd"))
		if cwd == dir && strings.TrimSpace(string(comm)) == filepath.Base(c.Name) {
			_ = syscall.Kill(other, syscall.SIGKILL)
		}
	}
}

// LookPath implements Runner.
func (Real) LookPath(name string) (string, error) { return exec.LookPath(name) }

// process is a started program; Wait may be called once.
type process struct {
	cmd      *exec.Cmd
	startErr error
	// ended, when not nil, is closed once the program has been waited for,
	// with waitErr set, by the goroutine that started it.
	ended   chan struct{}
	waitErr error
}

// startOn starts cmd. With ownThread, it is started from a goroutine locked
// to an OS thread of its own that waits for the program and ends, with its
// thread, only once the program has ended. Linux sends the parent-death
// signal when the thread that forked a program exits, not when the process
// does, and the Go runtime may end a thread before dbio ends: without a
// thread of its own, a program could be signalled while dbio still runs.
func startOn(cmd *exec.Cmd, ownThread bool) *process {
	p := &process{cmd: cmd}
	if !ownThread {
		p.startErr = cmd.Start()
		return p
	}
	p.ended = make(chan struct{})
	started := make(chan error, 1)
	go func() {
		// Never unlocked: when this goroutine returns, its thread goes with it.
		runtime.LockOSThread()
		defer close(p.ended)
		if err := cmd.Start(); err != nil {
			p.startErr, p.waitErr = err, err
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
	}()
	<-started
	return p
}

func (p *process) wait() error {
	if p.startErr != nil {
		return p.startErr
	}
	if p.ended == nil {
		return p.cmd.Wait()
	}
	<-p.ended
	return p.waitErr
}

func (p *process) PID() int                   { return p.cmd.Process.Pid }
func (p *process) Wait() error                { return p.wait() }
func (p *process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

func tee(capture *bytes.Buffer, w io.Writer) io.Writer {
	if w == nil {
		return capture
	}
	return io.MultiWriter(capture, w)
}
