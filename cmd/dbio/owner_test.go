package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// ownerTestArgs carries, in the environment, the command line a child copy
// of this test binary runs as dbio (see TestOwnerHelperProcess).
const ownerTestArgs = "DBIO_OWNER_TEST_ARGS"

// TestOwnerHelperProcess is not a test: started by dbioProcess with
// ownerTestArgs set, this test binary runs dbio's command line as its own
// process, so that two runs really are two processes.
func TestOwnerHelperProcess(t *testing.T) {
	raw := os.Getenv(ownerTestArgs)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Exit(99)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := &App{Stdout: os.Stdout, Stderr: os.Stdout, Getenv: os.Getenv, Now: time.Now, Exec: execx.Real{}, SysFS: target.HostFS(), Args: append([]string{"dbio"}, args...)}
	os.Exit(run(ctx, app, args))
}

// proc is a dbio run in its own process, its output read line by line.
type proc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	out   bytes.Buffer
	lines chan string
	done  chan struct{}
}

func dbioProcess(t *testing.T, args ...string) *proc {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestOwnerHelperProcess$")
	cmd.Env = append(os.Environ(), ownerTestArgs+"="+string(raw))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	p := &proc{cmd: cmd, lines: make(chan string, 1024), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A test that failed half-way must not leave a run (and its server) behind.
		cmd.Process.Signal(os.Interrupt)
		<-p.done
	})
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		close(p.lines)
		io.Copy(io.Discard, stdout)
	}()
	return p
}

// waitLine returns once the process prints a line starting with prefix.
func (p *proc) waitLine(t *testing.T, prefix string) {
	t.Helper()
	for line := range p.lines {
		if strings.HasPrefix(line, prefix) {
			return
		}
	}
	t.Fatalf("the run ended without printing %q:\n%s", prefix, p.output())
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// wait returns the process's exit code once its output is all read.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	go func() {
		for range p.lines {
		}
	}()
	<-p.done
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// tpccRowsOneWarehouse is what TPC-C loads for one warehouse with dbio's default seed.
const tpccRowsOneWarehouse = 598810

// TestTwoRunsOnOneTarget starts a run, and a second one on the same target
// while the first holds it (during its load on SQLite, during its initdb on
// PostgreSQL): the second is refused at once with exit code 2, naming the
// first's pid, command and start time, and writes nothing; the first
// completes with the figures of an undisturbed run.
func TestTwoRunsOnOneTarget(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real loads")
	}
	for _, tc := range []struct {
		engine string
		// when is the first run's line after which the second starts.
		when string
	}{
		{"sqlite", "preparing tpcc"},
		{"postgres", "starting postgres"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			testenv.RequireEngine(t, tc.engine)
			dir := t.TempDir()
			// A server started as an unprivileged user must reach the target.
			os.Chmod(filepath.Dir(dir), 0o755)
			os.Chmod(dir, 0o755)
			tgt := filepath.Join(dir, "target")
			os.Mkdir(tgt, 0o755)
			firstArgs := []string{"tpcc", "--engine", tc.engine, "--target", tgt, "--results", filepath.Join(dir, "first"),
				"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "2s"}
			began := time.Now()
			first := dbioProcess(t, firstArgs...)
			first.waitLine(t, tc.when)

			second := dbioProcess(t, "tpcc", "--engine", tc.engine, "--target", tgt+"/", "--results", filepath.Join(dir, "second"),
				"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "2s")
			if code := second.wait(t); code != exitUsage {
				t.Fatalf("second run: exit code %d, want %d:\n%s", code, exitUsage, second.output())
			}
			msg := second.output()
			for _, want := range []string{
				"target " + tgt + " is in use by another dbio run (pid " + strconv.Itoa(first.cmd.Process.Pid) + ", started " + began.Format("2006-01-02"),
				"command: dbio " + strings.Join(firstArgs, " ") + ")",
				"wait until it has finished, or choose another target",
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("the refusal does not say %q:\n%s", want, msg)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "second")); !os.IsNotExist(err) {
				t.Errorf("the refused run created its results directory: %v", err)
			}

			if code := first.wait(t); code != exitOK {
				t.Fatalf("first run: exit code %d:\n%s", code, first.output())
			}
			l := loadOnly(t, filepath.Join(dir, "first"))
			if l.Run.Status != results.StatusCompleted || l.Run.Load == nil {
				t.Fatalf("first run: status %s, load %+v", l.Run.Status, l.Run.Load)
			}
			if l.Run.Load.Rows != tpccRowsOneWarehouse || l.Run.Load.Scale != 1 || l.Run.Load.BytesWritten <= 0 {
				t.Errorf("first run's load: %+v, want %d rows of one warehouse and the bytes it kept", *l.Run.Load, tpccRowsOneWarehouse)
			}
			for _, c := range l.Run.Checks {
				if !c.Passed {
					t.Errorf("first run's check %s failed: %s", c.Name, c.Detail)
				}
			}
			if tpm, ok := l.Steps[0].Figure("tpm"); !ok || tpm <= 0 {
				t.Errorf("first run's TPM %v", tpm)
			}
			// The target is free again: the lock died with the first run.
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), []string{"tpcc", "--engine", tc.engine, "--target", tgt, "--results", filepath.Join(dir, "third"),
				"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "1s", "--reuse", "--skip-checks"})
			if code != exitOK {
				t.Errorf("a run after the first: exit code %d:\n%s", code, out.String())
			}
		})
	}
}

// TestTargetHeldInAnyRole: a target another run holds is refused whatever
// role this run gives it (data, log, backup), before anything is written.
func TestTargetHeldInAnyRole(t *testing.T) {
	root := t.TempDir()
	held := filepath.Join(root, "held")
	other := filepath.Join(root, "other")
	os.Mkdir(held, 0o755)
	os.Mkdir(other, 0o755)
	tg, err := target.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := tg.Lock(target.HostFS(), target.Holder{PID: 4242, Command: []string{"dbio", "quick"}, Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, args := range [][]string{
		{"tpcc", "--target", held},
		{"tpcc", "--engine", "postgres", "--target", other, "--log-target", held},
		{"backup", "--target", other, "--backup-target", held},
		{"disk", "--target", other, "--target", held, "--size", "64M", "--runtime", "1s"},
		{"quick", "--target", held},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := filepath.Join(t.TempDir(), "results")
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), append(args, "--results", res))
			if code != exitUsage || !strings.Contains(out.String(), "target "+held+" is in use by another dbio run (pid 4242") {
				t.Errorf("exit code %d:\n%s", code, out.String())
			}
			if _, err := os.Stat(res); !os.IsNotExist(err) {
				t.Errorf("results written: %v", err)
			}
		})
	}
}
