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
	"strings"
	"syscall"
	"time"
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
	Setsid bool
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

// Real runs programs on the host.
type Real struct{}

var _ Runner = Real{}

func (Real) command(ctx context.Context, c Cmd) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	cmd.Stdin = c.Stdin
	attr := &syscall.SysProcAttr{Setsid: c.Setsid}
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
	err := cmd.Run()
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
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.String(), err)
	}
	return &process{cmd: cmd}, nil
}

// LookPath implements Runner.
func (Real) LookPath(name string) (string, error) { return exec.LookPath(name) }

type process struct{ cmd *exec.Cmd }

func (p *process) PID() int                   { return p.cmd.Process.Pid }
func (p *process) Wait() error                { return p.cmd.Wait() }
func (p *process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

func tee(capture *bytes.Buffer, w io.Writer) io.Writer {
	if w == nil {
		return capture
	}
	return io.MultiWriter(capture, w)
}
