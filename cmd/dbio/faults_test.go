package main

// The fault matrix: dbio run as a real process (this test binary, started
// again as dbio) against real servers, hit by the faults a user meets, with
// the exit code, run.json's status, the steps kept and the processes left
// behind checked for each. The faults land on events (a line printed, a
// summary or a series row written, a pid file), never after a sleep.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/engines"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
	"dbio/internal/workload"
	"dbio/internal/workload/tpcc"
)

// asDBIOEnv makes this test binary run dbio's main instead of the tests.
const asDBIOEnv = "DBIO_TEST_AS_DBIO"

func TestMain(m *testing.M) {
	if os.Getenv(asDBIOEnv) == "1" {
		os.Unsetenv(asDBIOEnv) // not for the programs dbio starts
		main()
		return
	}
	// No test's run, in this process or a dbio it starts, is remembered
	// in the real home's history.
	os.Setenv(historyEnv, historyOff)
	// A signal the tests were started with ignored (make test under nohup
	// ignores SIGHUP, a background job in a shell without job control
	// SIGINT) would be ignored by every dbio they start, which keeps it
	// ignored on purpose, and the matrix's signal cases would see runs
	// that cannot be stopped. A handler of this process's own is reset to
	// the default in each program it starts; nohup's own cases still ignore.
	for _, s := range []os.Signal{syscall.SIGHUP, os.Interrupt} {
		if signal.Ignored(s) {
			signal.Notify(make(chan os.Signal, 1), s)
		}
	}
	code := m.Run()
	templates.removeAll()
	os.Exit(code)
}

// faultDeadline bounds every wait of the matrix, so that a broken case
// fails instead of hanging the suite; generous, since a CI machine running
// every package at once can take minutes over what takes one here.
const faultDeadline = 10 * time.Minute

// runningDBIO is dbio running as a process of its own.
type runningDBIO struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *lineLog
	done chan struct{}
	err  error
}

// lineLog keeps what dbio prints and tells waiters when it changes.
type lineLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startDBIO starts dbio with args, its output collected.
func startDBIO(t *testing.T, args ...string) *runningDBIO {
	t.Helper()
	return startProgram(t, os.Args[0], args...)
}

// startProgram starts name with args, running dbio (this test binary)
// itself or through a program that execs it, such as nohup.
func startProgram(t *testing.T, name string, args ...string) *runningDBIO {
	t.Helper()
	return startProgramEnv(t, nil, name, args...)
}

// startProgramEnv is startProgram with env added to the test's own
// environment: a parallel test cannot change the process's.
func startProgramEnv(t *testing.T, env []string, name string, args ...string) *runningDBIO {
	t.Helper()
	p := &runningDBIO{t: t, cmd: exec.Command(name, args...), out: newLineLog(), done: make(chan struct{})}
	p.cmd.Env = append(append(os.Environ(), asDBIOEnv+"=1"), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitFor waits until cond holds, checking again whenever dbio prints and
// every 20 ms (files change without a word); it fails the test if dbio
// ends first or the deadline passes.
func (p *runningDBIO) waitFor(what string, cond func() bool) {
	p.t.Helper()
	deadline := time.NewTimer(faultDeadline)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		p.out.mu.Lock()
		changed := p.out.changed
		p.out.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-p.done:
			if cond() {
				return
			}
			p.t.Fatalf("dbio ended (%v) before %s:\n%s", p.err, what, p.out)
		case <-deadline.C:
			p.t.Fatalf("no %s within %s:\n%s", what, faultDeadline, p.out)
		case <-changed:
		case <-tick.C:
		}
	}
}

// waitLine waits for a line containing s.
func (p *runningDBIO) waitLine(s string) {
	p.t.Helper()
	p.waitFor(fmt.Sprintf("line with %q", s), func() bool { return strings.Contains(p.out.String(), s) })
}

// exit waits for dbio to end and returns its exit code, -1 when a signal killed it.
func (p *runningDBIO) exit() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(faultDeadline):
		p.t.Fatalf("dbio still runs after %s:\n%s", faultDeadline, p.out)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Fatal(p.err)
	}
	return 0
}

func (p *runningDBIO) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal dbio: %v", err)
	}
}

// runDir is the one results directory under base, once it exists.
func runDir(base string) string {
	m, _ := filepath.Glob(filepath.Join(base, "*", "run.json"))
	if len(m) != 1 {
		return ""
	}
	return filepath.Dir(m[0])
}

// seriesHas says whether the run under base has written a series.csv row
// of step in phase.
func seriesHas(base, step, phase string) bool {
	dir := runDir(base)
	if dir == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, "series.csv"))
	if err != nil {
		return false
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	for {
		rec, err := r.Read()
		if err != nil {
			return false
		}
		if len(rec) > 3 && rec[2] == step && rec[3] == phase {
			return true
		}
	}
}

// stepWritten says whether the run under base has written step n's summary.
func stepWritten(base string, n int) bool {
	dir := runDir(base)
	m, _ := filepath.Glob(filepath.Join(dir, "steps", fmt.Sprintf("%02d-*", n), "summary.json"))
	return dir != "" && len(m) > 0
}

// processesIn lists the processes (other than this one) whose working
// directory or command line is in dir: a server's, and its workers'.
func processesIn(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		proc := filepath.Join("/proc", e.Name())
		if stat, err := os.ReadFile(filepath.Join(proc, "stat")); err != nil || zombie(stat) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(proc, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(proc, "cwd"))
		args := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(args, dir) || cwd == dir || strings.HasPrefix(cwd, dir+"/") {
			out = append(out, fmt.Sprintf("%d %s (cwd %s)", pid, args, cwd))
		}
	}
	return out
}

// running says whether process pid exists and has not ended (a zombie has:
// where nothing reaps orphans, an ended server stays one).
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	return err == nil && !zombie(stat)
}

func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// noServerLeft waits until no process runs in dir. A server told to stop
// by the kernel (its dbio was killed) takes a moment to shut down.
func noServerLeft(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(faultDeadline)
	for {
		left := processesIn(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left running in %s:\n%s", dir, strings.Join(left, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// faultDirs makes a target the servers' unprivileged user can reach and a
// results base.
func faultDirs(t *testing.T) (target, base string) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target, base = filepath.Join(root, "target"), filepath.Join(root, "results")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	return target, base
}

// loadFaultRun reads the run under base as dbio's readers do (an abandoned run
// is settled as such).
func loadFaultRun(t *testing.T, base string) *results.Loaded {
	t.Helper()
	dir := runDir(base)
	if dir == "" {
		t.Fatalf("no results directory under %s", base)
	}
	l, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func stepStatuses(l *results.Loaded) []results.Status {
	var out []results.Status
	for _, s := range l.Steps {
		out = append(out, s.Status)
	}
	return out
}

// faultCase is one fault of the matrix and what dbio must make of it.
type faultCase struct {
	name   string
	engine string
	// fresh runs on an empty target (the fault is in the load); other
	// cases reuse a copy of a loaded one.
	fresh bool
	args  []string
	// fault waits for its moment and strikes; target and base are the run's.
	fault  func(t *testing.T, p *runningDBIO, target, base string)
	code   int
	status results.Status
	steps  []results.Status
	// says is what dbio's output must contain.
	says []string
}

// signalAt sends sig once cond holds.
func signalAt(what string, cond func(target, base string) bool, sig syscall.Signal) func(*testing.T, *runningDBIO, string, string) {
	return func(t *testing.T, p *runningDBIO, target, base string) {
		p.waitFor(what, func() bool { return cond(target, base) })
		p.signal(sig)
	}
}

func TestFaultMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real engines")
	}
	measuring := func(step string) func(string, string) bool {
		return func(_, base string) bool { return seriesHas(base, step, "measure") }
	}
	long := []string{"--users", "1", "--ramp-time", "0s", "--runtime", "60s"}
	cases := []faultCase{
		{
			name: "SIGINT in the load", engine: "postgres", fresh: true, args: long,
			fault: func(t *testing.T, p *runningDBIO, _, _ string) {
				p.waitLine("preparing tpcc")
				p.signal(syscall.SIGINT)
			},
			code: exitInterrupted, status: results.StatusInterrupted, says: []string{"(interrupt signal received)", "results so far kept in"},
		},
		{
			name: "SIGINT in the ramp-up", engine: "postgres", args: []string{"--users", "1", "--ramp-time", "60s", "--runtime", "1s"},
			fault: signalAt("a ramp-up row", func(_, base string) bool { return seriesHas(base, "users-1", "rampup") }, syscall.SIGINT),
			code:  exitInterrupted, status: results.StatusInterrupted, says: []string{"(interrupt signal received)"},
		},
		{
			// The second step's first second is measured; four remain.
			name: "SIGINT in a step", engine: "postgres", args: []string{"--users", "1,2", "--ramp-time", "0s", "--runtime", "5s"},
			fault: signalAt("the second step measuring", measuring("users-2"), syscall.SIGINT),
			code:  exitInterrupted, status: results.StatusInterrupted, steps: []results.Status{results.StatusCompleted, results.StatusInterrupted},
			says: []string{"INTERRUPTED", "(interrupt signal received)"},
		},
		{
			name: "SIGHUP in a step", engine: "postgres", args: long,
			fault: signalAt("the first step measuring", measuring("users-1"), syscall.SIGHUP),
			code:  exitInterrupted, status: results.StatusInterrupted, steps: []results.Status{results.StatusInterrupted},
			says: []string{"(hangup signal received)"},
		},
		{
			name: "SIGTERM in a step", engine: "mariadb", args: long,
			fault: signalAt("the first step measuring", measuring("users-1"), syscall.SIGTERM),
			code:  exitInterrupted, status: results.StatusInterrupted, steps: []results.Status{results.StatusInterrupted},
			says: []string{"(terminated signal received)"},
		},
		{
			name: "PostgreSQL killed in a step", engine: "postgres", args: long,
			fault: func(t *testing.T, p *runningDBIO, target, base string) {
				p.waitFor("the first step measuring", func() bool { return seriesHas(base, "users-1", "measure") })
				killServer(t, target, "postgres")
			},
			code: exitFailure, status: results.StatusFailed, steps: []results.Status{results.StatusFailed},
			says: []string{"database server exited during the run"},
		},
		{
			name: "MariaDB killed in a step", engine: "mariadb", args: long,
			fault: func(t *testing.T, p *runningDBIO, target, base string) {
				p.waitFor("the first step measuring", func() bool { return seriesHas(base, "users-1", "measure") })
				killServer(t, target, "mariadb")
			},
			code: exitFailure, status: results.StatusFailed, steps: []results.Status{results.StatusFailed},
			says: []string{"database server exited during the run"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testenv.RequireEngine(t, c.engine)
			t.Parallel()
			var target, base string
			args := []string{"tpcc", "--engine", c.engine, "--warehouses", "1"}
			if c.fresh {
				target, base = faultDirs(t)
			} else {
				target, base = loadedTarget(t, c.engine)
				args = append(args, "--reuse")
			}
			args = append(args, "--target", target, "--results", base)
			p := startDBIO(t, append(args, c.args...)...)
			c.fault(t, p, target, base)
			checkOutcome(t, p, c, target, base)
		})
	}
}

// checkOutcome checks what a fault case must leave.
func checkOutcome(t *testing.T, p *runningDBIO, c faultCase, target, base string) {
	t.Helper()
	if code := p.exit(); code != c.code {
		t.Errorf("exit code %d, want %d", code, c.code)
	}
	out := p.out.String()
	for _, s := range c.says {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}
	l := loadFaultRun(t, base)
	if l.Run.Status != c.status {
		t.Errorf("run.json status %s (error %q), want %s", l.Run.Status, l.Run.Error, c.status)
	}
	if got := stepStatuses(l); !slices.Equal(got, c.steps) {
		t.Errorf("steps kept %v, want %v", got, c.steps)
	}
	noServerLeft(t, target)
	noServerLeft(t, base)
	if t.Failed() || testing.Verbose() {
		t.Logf("dbio said:\n%s", out)
	}
}

// killServer kills the managed server on target with SIGKILL, as the OOM
// killer or an operator would.
func killServer(t *testing.T, target, eng string) {
	t.Helper()
	if err := syscall.Kill(serverPID(t, target, eng), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// serverPID reads the managed server's PID from its pid file.
func serverPID(t *testing.T, target, eng string) int {
	t.Helper()
	file := filepath.Join(target, "dbio", "postgres", "data", "postmaster.pid")
	if eng != "postgres" {
		file = filepath.Join(target, "dbio", eng, "run", "mysqld.pid")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("pid file %s: %v", file, err)
	}
	return pid
}

// templates are targets holding a loaded one-warehouse TPC-C database, one
// per engine, made once per test binary by a real run; a case that does not
// test the load runs on a copy with --reuse, which spares it the load.
var templates = templateSet{made: map[string]func() (string, error){}}

type templateSet struct {
	mu   sync.Mutex
	root string
	made map[string]func() (string, error)
}

func (s *templateSet) get(eng string) (string, error) {
	s.mu.Lock()
	if s.root == "" {
		root, err := os.MkdirTemp("", "dbio-fault-templates-")
		if err != nil {
			s.mu.Unlock()
			return "", err
		}
		if err := os.Chmod(root, 0o755); err != nil {
			s.mu.Unlock()
			return "", err
		}
		s.root = root
	}
	load, ok := s.made[eng]
	if !ok {
		root := s.root
		load = sync.OnceValues(func() (string, error) { return makeTemplate(root, eng) })
		s.made[eng] = load
	}
	s.mu.Unlock()
	return load()
}

func (s *templateSet) removeAll() {
	if s.root != "" {
		os.RemoveAll(s.root)
	}
}

// makeTemplate loads TPC-C on a target of its own with a short real run.
func makeTemplate(root, eng string) (string, error) {
	target := filepath.Join(root, eng)
	if err := os.Mkdir(target, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command(os.Args[0], "tpcc", "--engine", eng, "--target", target, "--results", filepath.Join(root, eng+"-results"),
		"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "1s", "--skip-checks")
	cmd.Env = append(os.Environ(), asDBIOEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("load the %s template: %v:\n%s", eng, err, out)
	}
	return target, nil
}

// loadedTarget is a copy of eng's loaded template, and a results base.
func loadedTarget(t *testing.T, eng string) (target, base string) {
	t.Helper()
	src, err := templates.get(eng)
	if err != nil {
		t.Fatal(err)
	}
	target, base = faultDirs(t)
	if out, err := exec.Command("cp", "-a", filepath.Join(src, "dbio"), target).CombinedOutput(); err != nil {
		t.Fatalf("copy the %s template: %v: %s", eng, err, out)
	}
	return target, base
}

// TestKilledDBIOLeavesNoServer kills dbio with SIGKILL mid-step: its server
// must end by itself, also when it runs inside a block-I/O cgroup (started
// through a wrapper, as the server's user), and the next look at the results
// must read abandoned and say so.
func TestKilledDBIOLeavesNoServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real engines")
	}
	cases := []struct {
		name, engine string
		args         []string
	}{
		{"postgres", "postgres", nil},
		{"mariadb", "mariadb", nil},
		{"postgres in a cgroup", "postgres", []string{"--limit", "riops=1000000,wiops=1000000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testenv.RequireEngine(t, c.engine)
			if len(c.args) > 0 {
				h := iolimit.SystemHost(target.HostFS().Sys)
				testenv.Require(t, os.Geteuid() == 0 && (h.V1Blkio != "" || h.V2 != ""), "root and cgroup block-I/O control", "run the tests as root on a host with the blkio controller (cgroup v1) or io.max (v2)")
			}
			t.Parallel()
			target, base := loadedTarget(t, c.engine)
			args := append([]string{"tpcc", "--engine", c.engine, "--reuse", "--target", target, "--results", base,
				"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "60s"}, c.args...)
			p := startDBIO(t, args...)
			p.waitFor("the first step measuring", func() bool { return seriesHas(base, "users-1", "measure") })
			server := serverPID(t, target, c.engine)
			p.signal(syscall.SIGKILL)
			if code := p.exit(); code != -1 {
				t.Errorf("exit code %d, want death by SIGKILL", code)
			}
			var onDisk results.Run
			if b, err := os.ReadFile(filepath.Join(runDir(base), "run.json")); err != nil || json.Unmarshal(b, &onDisk) != nil || onDisk.Status != results.StatusRunning {
				t.Fatalf("run.json of the killed run: %s, %v; want running until someone looks", onDisk.Status, err)
			}
			if len(c.args) > 0 {
				// The limit is recorded with the target it caps, before the server starts.
				capped := false
				for _, ti := range onDisk.Environment.Targets {
					capped = capped || (ti.Role == "data" && ti.Limit != nil && ti.Limit.ReadIOPS == 1000000 && ti.Limit.WriteIOPS == 1000000)
				}
				if !capped {
					t.Errorf("run.json's data target does not record the limit: %+v", onDisk.Environment.Targets)
				}
			}
			noServerLeft(t, target)
			if running(server) {
				t.Errorf("server %d still runs", server)
			}
			if len(c.args) > 0 {
				// A killed dbio cannot remove its group: the next one that
				// makes a group sweeps it, once the server in it has ended.
				if len(runGroups(runDir(base))) == 0 {
					t.Errorf("no cgroup of the killed run to sweep: the test no longer covers the sweep")
				}
				iolimit.SystemHost("/sys").Sweep()
				if left := runGroups(runDir(base)); len(left) > 0 {
					t.Errorf("the sweep left the killed run's cgroups: %v", left)
				}
			}
			r := startDBIO(t, "report", runDir(base))
			if code := r.exit(); code != exitOK {
				t.Fatalf("dbio report of the killed run: exit %d:\n%s", code, r.out)
			}
			if !strings.Contains(r.out.String(), "abandoned: the dbio that wrote it (pid "+strconv.Itoa(p.cmd.Process.Pid)+") ended without finishing the run") {
				t.Errorf("dbio report does not say the run was abandoned:\n%s", r.out)
			}
			page, _ := os.ReadFile(filepath.Join(runDir(base), "report.html"))
			if !strings.Contains(string(page), "The run was abandoned") {
				t.Error("report.html does not say the run was abandoned")
			}
			l := loadFaultRun(t, base)
			if l.Run.Status != results.StatusAbandoned || len(l.Steps) != 0 {
				t.Errorf("run.json after the look: %s with %d steps; want abandoned, no step finished", l.Run.Status, len(l.Steps))
			}
		})
	}
}

// TestLeftoverServer starts a server on a target as a dbio that died would
// have left it (in its own session, carrying that dbio's PID): the next run
// stops it, says so and records it, then runs. A server whose dbio is alive
// is left alone and the run refused.
func TestLeftoverServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real engines")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, engine, says string
		owner              int
	}{
		{"PostgreSQL whose dbio is gone", "postgres", "PostgreSQL", gone.Process.Pid},
		{"MariaDB whose dbio is gone", "mariadb", "mariadb", gone.Process.Pid},
		{"PostgreSQL whose dbio is alive", "postgres", "PostgreSQL", os.Getpid()},
	} {
		t.Run(c.name, func(t *testing.T) {
			testenv.RequireEngine(t, c.engine)
			t.Parallel()
			target, base := loadedTarget(t, c.engine)
			leftover := startLeftover(t, c.engine, filepath.Join(target, "dbio", c.engine), c.owner)
			p := startDBIO(t, "tpcc", "--engine", c.engine, "--reuse", "--target", target, "--results", base,
				"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "1s", "--skip-checks")
			code := p.exit()
			if c.owner == os.Getpid() {
				if code != exitFailure || !strings.Contains(p.out.String(), fmt.Sprintf("a PostgreSQL server (pid %d) is already running", leftover.Process.Pid)) {
					t.Fatalf("exit %d; want a refusal naming the running server:\n%s", code, p.out)
				}
				if !running(leftover.Process.Pid) {
					t.Error("the server of a live dbio was stopped")
				}
				if l := loadFaultRun(t, base); l.Run.Status != results.StatusFailed {
					t.Errorf("run.json %s, want failed", l.Run.Status)
				}
				return
			}
			said := fmt.Sprintf("stopped the %s server (pid %d) on %s, left running by an earlier dbio (pid %d) that is gone",
				c.says, leftover.Process.Pid, filepath.Join(target, "dbio", c.engine), c.owner)
			if code != exitOK || !strings.Contains(p.out.String(), said) {
				t.Fatalf("exit %d; want a completed run saying %q:\n%s", code, said, p.out)
			}
			l := loadFaultRun(t, base)
			if l.Run.Status != results.StatusCompleted || !slices.Contains(l.Run.Notes, said) {
				t.Errorf("run.json: %s, notes %q; want completed, noting the stopped server", l.Run.Status, l.Run.Notes)
			}
			if err := leftover.Wait(); err != nil {
				t.Errorf("the leftover server did not shut down cleanly: %v", err)
			}
		})
	}
}

// startLeftover starts the server of the instance in dir (dbio's directory
// for eng on a target) in its own session, as its user, marked as started by
// the dbio with PID owner, and waits until it is up, as a server left behind
// is (MariaDB asked to shut down while it starts has been seen to hang, then
// to be killed after the grace period). The settings dbio
// wrote name the template's directories and a port of its own time: the
// command line overrides them. The test stops the server if dbio did not.
func startLeftover(t *testing.T, eng, dir string, owner int) *exec.Cmd {
	t.Helper()
	port, err := server.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	var pidFile, account, ready string
	// What ends the server and its workers at once, should dbio not have.
	end := syscall.SIGKILL
	switch eng {
	case "postgres":
		bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
		bin, err := exec.LookPath("postgres")
		if err != nil && len(bins) > 0 {
			bin = bins[len(bins)-1]
		}
		cmd = exec.Command(bin, "-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port), "-k", filepath.Join(dir, "run"))
		pidFile, account, end = filepath.Join(dir, "data", "postmaster.pid"), "postgres", syscall.SIGQUIT
		ready = "ready to accept connections"
	default:
		bin, err := exec.LookPath("mariadbd")
		if err != nil {
			bin = "/usr/sbin/mariadbd"
		}
		pidFile, account, ready = filepath.Join(dir, "run", "mysqld.pid"), "mysql", "ready for connections"
		cmd = exec.Command(bin, "--defaults-file="+filepath.Join(dir, "my.cnf"), "--datadir="+filepath.Join(dir, "data"),
			"--socket="+filepath.Join(dir, "run", "mysqld.sock"), "--pid-file="+pidFile, "--port="+strconv.Itoa(port))
	}
	cmd.Env = append(os.Environ(), server.OwnerEnv+"="+strconv.Itoa(owner))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if u, err := server.Choose(os.Geteuid(), account, "nobody"); err == nil && !u.Self {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID}
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "leftover.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if syscall.Kill(cmd.Process.Pid, end) == nil {
			_ = cmd.Wait()
		}
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("the leftover server's log:\n%s", b)
		}
	})
	deadline := time.Now().Add(faultDeadline)
	for {
		b, _ := os.ReadFile(log.Name())
		if target.RunningPID(pidFile) == cmd.Process.Pid && bytes.Contains(b, []byte(ready)) {
			return cmd
		}
		if time.Now().After(deadline) || !running(cmd.Process.Pid) {
			t.Fatalf("the leftover server did not come up:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// spaceChecked is the space the preflight asks of a data target for data
// bytes of a fresh database on engine name: the data and the engine's own
// files.
func spaceChecked(t *testing.T, name string, data uint64) uint64 {
	t.Helper()
	e, err := engines.New(engines.Deps{Exec: execx.Real{}, ProcRoot: "/proc"}).Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	total := data
	if s, ok := e.(engine.SpaceNeeds); ok {
		for _, f := range s.SpaceNeed(engine.Options{}, data) {
			total += f.Bytes
		}
	}
	return total
}

// TestFilesystemsFill fills, during a run, the filesystem of the data and
// that of the results: the run stops with a clear error, recorded as failed,
// and leaves no server.
func TestFilesystemsFill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real engines")
	}
	for _, eng := range []string{"sqlite", "postgres"} {
		t.Run("data on "+eng, func(t *testing.T) {
			testenv.RequireEngine(t, eng)
			t.Parallel()
			// Room for the estimate the run checks first (the data and the
			// engine's own files), and a little more.
			fs := smallfs.Mount(t, int64(spaceChecked(t, eng, tpcc.EstimatedBytes(1)))+16<<20)
			_, base := faultDirs(t)
			p := startDBIO(t, "tpcc", "--engine", eng, "--target", fs, "--results", base,
				"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "5s")
			p.waitLine("preparing tpcc")
			if err := smallfs.Fill(fs, 0); err != nil {
				t.Fatal(err)
			}
			c := faultCase{code: exitFailure, status: results.StatusFailed}
			checkOutcome(t, p, c, fs, base)
			// The engine's words need not say the disk is full (PostgreSQL's
			// partial block write does not): dbio names the filesystem.
			if l := loadFaultRun(t, base); !strings.Contains(l.Run.Error, "the filesystem holding "+fs+" is full") {
				t.Errorf("run.json error %q does not name the full filesystem %s", l.Run.Error, fs)
			}
		})
	}
	t.Run("results", func(t *testing.T) {
		t.Parallel()
		base := smallfs.Mount(t, 32<<20)
		target, _ := faultDirs(t)
		p := startDBIO(t, "tpcc", "--engine", "sqlite", "--target", target, "--results", base,
			"--warehouses", "1", "--users", "1,2", "--ramp-time", "0s", "--runtime", "3s")
		p.waitFor("the first step's summary", func() bool { return stepWritten(base, 0) })
		if err := smallfs.Fill(base, 0); err != nil {
			t.Fatal(err)
		}
		dir := runDir(base)
		c := faultCase{code: exitFailure, status: results.StatusFailed, steps: []results.Status{results.StatusCompleted},
			says: []string{"the filesystem holding " + dir + " is full", "== dbio tpcc: FAILED ==", "results: " + dir}}
		checkOutcome(t, p, c, target, base)
		if l := loadFaultRun(t, base); !strings.Contains(l.Run.Error, "the filesystem holding "+dir+" is full") {
			t.Errorf("run.json error %q does not name the full filesystem", l.Run.Error)
		}
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
			t.Errorf("no report in the space given back: %v", err)
		}
	})
}

// checkGate is a workload whose consistency checks begin with the user's
// interrupt: it cancels the run, as Ctrl-C does, when the checks start.
type checkGate struct {
	workload.Workload
	interrupt func()
}

func (g checkGate) Check(ctx context.Context, inst engine.Instance) ([]workload.CheckResult, error) {
	g.interrupt()
	<-ctx.Done()
	return g.Workload.Check(ctx, inst)
}

// TestInterruptInTheChecks interrupts a run in its consistency checks. The
// checks of one warehouse take a fraction of a second, too short to land a
// signal in reliably, so the interrupt comes from inside the checks, as the
// cancellation a signal causes (the other cases show that it does).
func TestInterruptInTheChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real engines")
	}
	testenv.RequireEngine(t, "postgres")
	dataDir, base := loadedTarget(t, "postgres")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	out := newLineLog()
	app := &App{Stdout: out, Stderr: out, Getenv: func(string) string { return "" }, Now: time.Now, Exec: execx.Real{Proc: target.HostFS().Proc}, SysFS: target.HostFS(), Args: []string{"dbio"}}
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	f := workloadFlags{def: tpcc.Definition(), settings: &tpcc.Settings{Config: tpcc.Config{Warehouses: 1, Loading: workload.Loading{Seed: 42, Reuse: true}}},
		run: runFlags{engines: app.Engines, engine: "postgres", target: dataDir, users: "1", step: time.Second, results: base, transport: "socket"}}
	plan, err := workloadPlan(app, f, "tpcc", nil)
	if err != nil {
		t.Fatal(err)
	}
	plan.Workload = checkGate{Workload: plan.Workload, interrupt: func() { cancel(errors.New("interrupt signal received")) }}
	code := exitCode(app, executePlan(ctx, app, plan, gates{}))
	if code != exitInterrupted {
		t.Errorf("exit code %d, want %d", code, exitInterrupted)
	}
	for _, s := range []string{"checking consistency", "consistency check", "(interrupt signal received)"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	l := loadFaultRun(t, base)
	if want := []results.Status{results.StatusCompleted}; l.Run.Status != results.StatusInterrupted || !slices.Equal(stepStatuses(l), want) {
		t.Errorf("run.json %s, steps %v; want interrupted, %v", l.Run.Status, stepStatuses(l), want)
	}
	noServerLeft(t, dataDir)
}

// TestFioKilledInADiskRun kills, during the second point of dbio disk, fio
// with SIGKILL (as the OOM killer would): the run fails, keeps the first
// point, records the second as failed, and none of fio's job processes goes
// on doing I/O; then dbio itself: fio stops with it, and the run reads
// abandoned on the next look.
func TestFioKilledInADiskRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio")
	}
	testenv.RequireProgram(t, "fio", testenv.InstallFio)
	for _, victim := range []string{"fio", "dbio"} {
		t.Run(victim, func(t *testing.T) {
			t.Parallel()
			target, base := faultDirs(t)
			p := startDBIO(t, "disk", "--target", target, "--results", base, "--profile", "four-corners",
				"--size", "64M", "--runtime", "3s", "--ramp-time", "0s")
			p.waitLine("[2/") // the second point has started, whatever the profile's count
			var fio int
			if victim == "fio" {
				// Its jobs forked and setting up: orphaned now, they would wait forever.
				p.waitFor("the second point's fio jobs", func() bool {
					fio = childFio(p.cmd.Process.Pid)
					return fio != 0 && len(processesIn(filepath.Join(runDir(base), "steps"))) > 1
				})
			} else {
				p.waitFor("the second point's fio writing", func() bool {
					fio = childFio(p.cmd.Process.Pid)
					return fio != 0 && fioWriting(filepath.Join(runDir(base), "steps"))
				})
			}
			if victim == "dbio" {
				p.signal(syscall.SIGKILL)
				if code := p.exit(); code != -1 {
					t.Errorf("exit code %d, want death by SIGKILL", code)
				}
				for deadline := time.Now().Add(faultDeadline); running(fio); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("fio %d still runs after dbio was killed", fio)
					}
				}
				// fio ends on the signal, but one of its job processes (each
				// in a session of its own, out of dbio's reach once dbio is
				// dead) can be left waiting forever on the fio that is gone.
				for _, line := range processesIn(base) {
					t.Logf("fio left behind (a limitation of fio's forked jobs): %s", line)
					if pid, err := strconv.Atoi(strings.Fields(line)[0]); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
				if l := loadFaultRun(t, base); l.Run.Status != results.StatusAbandoned || !slices.Equal(stepStatuses(l), []results.Status{results.StatusCompleted}) {
					t.Errorf("run.json %s, steps %v; want abandoned, the first point kept", l.Run.Status, stepStatuses(l))
				}
				return
			}
			if err := syscall.Kill(fio, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			p.exit()
			if left := processesIn(base); len(left) > 0 {
				t.Errorf("fio's jobs outlived it:\n%s", strings.Join(left, "\n"))
			}
			c := faultCase{code: exitFailure, status: results.StatusFailed, steps: []results.Status{results.StatusCompleted, results.StatusFailed},
				says: []string{"fio was killed by signal 9"}}
			checkOutcome(t, p, c, target, base)
		})
	}
}

// fioWriting says whether a fio job process working in a directory below
// dir has written.
func fioWriting(dir string) bool {
	for _, line := range processesIn(dir) {
		pid, _, _ := strings.Cut(line, " ")
		comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
		io, _ := os.ReadFile(filepath.Join("/proc", pid, "io"))
		for _, l := range strings.Split(string(io), "\n") {
			if v, ok := strings.CutPrefix(l, "write_bytes: "); ok && strings.TrimSpace(string(comm)) == "fio" && v != "0" {
				return true
			}
		}
	}
	return false
}

// childFio is the PID of a fio that process parent started, or 0.
func childFio(parent int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || !bytes.Contains(stat, []byte("(fio)")) {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(parent) {
			return pid
		}
	}
	return 0
}

// TestRunSurvives: what must not stop a run. A SIGHUP to a dbio started
// under nohup (which ignores it) leaves the run going; so does the end of
// whoever read dbio's output (| head, | tee in a terminal that closed),
// which used to kill dbio with SIGPIPE and leave its server running.
func TestRunSurvives(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real engines")
	}
	t.Run("SIGHUP under nohup", func(t *testing.T) {
		testenv.RequireProgram(t, "nohup", "apt-get install -y coreutils")
		t.Parallel()
		target, base := faultDirs(t)
		nohup, _ := exec.LookPath("nohup")
		p := startProgram(t, nohup, os.Args[0], "tpcc", "--engine", "sqlite", "--target", target, "--results", base,
			"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "3s", "--skip-checks")
		p.waitFor("the step measuring", func() bool { return seriesHas(base, "users-1", "measure") })
		p.signal(syscall.SIGHUP)
		c := faultCase{code: exitOK, status: results.StatusCompleted, steps: []results.Status{results.StatusCompleted}}
		checkOutcome(t, p, c, target, base)
	})
	t.Run("output reader gone", func(t *testing.T) {
		testenv.RequireEngine(t, "postgres")
		t.Parallel()
		target, base := loadedTarget(t, "postgres")
		cmd := exec.Command(os.Args[0], "tpcc", "--engine", "postgres", "--reuse", "--target", target, "--results", base,
			"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "2s", "--skip-checks")
		cmd.Env = append(os.Environ(), asDBIOEnv+"=1")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		// Read up to the load, then go away as head would.
		lines := bufio.NewScanner(out)
		for lines.Scan() && !strings.HasPrefix(lines.Text(), "preparing") {
		}
		out.Close()
		err = cmd.Wait()
		if err != nil {
			t.Errorf("dbio ended with %v once its output was gone; want a finished run", err)
		}
		l := loadFaultRun(t, base)
		if l.Run.Status != results.StatusCompleted || len(l.Steps) != 1 {
			t.Errorf("run.json %s with %d steps; want completed with its step", l.Run.Status, len(l.Steps))
		}
		noServerLeft(t, target)
	})
}
