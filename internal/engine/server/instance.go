package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"dbio/internal/engine"
	"dbio/internal/execx"
	"dbio/internal/results"
)

// Shutdown is how an engine asks its server to end: Signal first, Escalate
// when the server has not ended within Grace, then SIGKILL.
type Shutdown struct {
	Signal, Escalate syscall.Signal
	Grace            time.Duration
}

// StopGrace is how long a clean shutdown may take before the server is
// killed: the server first writes its dirty pages (InnoDB) or a checkpoint
// (PostgreSQL), which on a slow disk with a large buffer pool takes a while.
const StopGrace = 3 * time.Minute

// StopOnFailure stops p as s says when the start that launched it fails,
// which *err says once the start returns.
func (s Shutdown) StopOnFailure(ctx context.Context, err *error, p *Process) {
	if *err != nil {
		_ = p.Stop(context.WithoutCancel(ctx), s.Signal, s.Escalate, s.Grace)
	}
}

// Instance is what the instances of the server engines (PostgreSQL,
// MariaDB) share: dbio's two connection pools and, for a server dbio
// manages, the supervision of its process, which a restore replaces and
// Stop ends in order. An engine embeds it and adds its own connections,
// commands and counters.
type Instance struct {
	// Facts is what Info reports; the engine fills it in as it opens and
	// starts the instance.
	Facts results.EngineInfo
	// Runner runs the client and backup programs, found in BinDirs or PATH.
	Runner  execx.Runner
	BinDirs []string

	dsn   string
	db    *sql.DB
	stats *sql.DB
	// idle is how many idle connections db keeps.
	idle int

	// Managed servers only. proc changes when a restore restarts the server.
	proc       atomic.Pointer[Process]
	procRoot   string
	shutdown   Shutdown
	tempSocket string
	wrap       func(execx.Cmd) execx.Cmd
	// An existing server found on this host (FindLocal): its process and
	// its directories, as it names them.
	externalPID     int
	dataDir, logDir string
	// exited outlives the server processes a restore replaces.
	exited   chan error
	watching sync.WaitGroup

	// ops serializes restores with each other and with Stop.
	ops      sync.Mutex
	closed   bool
	stopOnce sync.Once
	stopErr  error
}

// errStopped refuses a restore of an instance that Stop has ended.
var errStopped = errors.New("restore: the instance is stopped")

// The server engines' instances are these through the embedded Instance.
var (
	_ engine.Processes    = (*Instance)(nil)
	_ engine.ServerPlaces = (*Instance)(nil)
	_ engine.Exited       = (*Instance)(nil)
	_ engine.OwnFiles     = (*Instance)(nil)
)

// OwnFiles implements engine.OwnFiles: a managed server's data directory,
// and its log directory when it is elsewhere; none of an existing
// server's, which are not dbio's.
func (in *Instance) OwnFiles() []string {
	f := in.Facts
	if !f.Managed || f.DataDir == "" {
		return nil
	}
	out := []string{f.DataDir}
	if rel, err := filepath.Rel(f.DataDir, f.LogDir); f.LogDir != "" && (err != nil || strings.HasPrefix(rel, "..")) {
		out = append(out, f.LogDir)
	}
	return out
}

// OpenPools opens the workload pool and the statistics pool through open,
// which returns a new pool on dbio's database, the one dsn names, each time
// it is called. maxConns bounds the workload pool; 0 lets it grow with the users.
func (in *Instance) OpenPools(dsn string, open func() (*sql.DB, error), maxConns int) error {
	in.dsn = dsn
	db, err := open()
	if err != nil {
		return err
	}
	idle := maxConns
	if maxConns > 0 {
		db.SetMaxOpenConns(maxConns)
	} else {
		idle = 300
	}
	// database/sql keeps only two idle connections by default; with many users
	// that would reconnect on every transaction and measure connection setup.
	db.SetMaxIdleConns(idle)
	stats, err := open()
	if err != nil {
		db.Close()
		return err
	}
	// Counters are sampled on their own connection, so a saturated pool never delays a sample.
	stats.SetMaxOpenConns(1)
	in.db, in.stats, in.idle = db, stats, idle
	return nil
}

// ClosePools closes both pools of an instance that failed to start.
func (in *Instance) ClosePools() {
	in.db.Close()
	in.stats.Close()
}

// DSN implements engine.Instance: the engine driver's connection string for
// the database dbio owns.
func (in *Instance) DSN() string { return in.dsn }

// Info implements engine.Instance.
func (in *Instance) Info() results.EngineInfo { return in.Facts }

// DB implements engine.Instance: a pool on the database dbio owns.
func (in *Instance) DB() *sql.DB { return in.db }

// StatsDB is the one-connection pool counters are read on.
func (in *Instance) StatsDB() *sql.DB { return in.stats }

// Supervision is how an instance looks after the managed server it runs.
type Supervision struct {
	// ProcRoot is the process table the server's processes are listed from.
	ProcRoot string
	// Shutdown is how Stop and a restore end the server.
	Shutdown Shutdown
	// SocketDir is the server's socket directory; TempSocket says (as
	// SocketDir did) that it is outside dbio's own, and Stop removes it.
	SocketDir  string
	TempSocket bool
	// Wrap, when set, wraps the server's command line (Options.Wrap); the
	// backup and restore programs are wrapped alike.
	Wrap func(execx.Cmd) execx.Cmd
}

// Supervise makes p the managed server of the instance, looked after as s says.
func (in *Instance) Supervise(p *Process, s Supervision) {
	in.procRoot, in.shutdown, in.wrap = s.ProcRoot, s.Shutdown, s.Wrap
	if s.TempSocket {
		in.tempSocket = s.SocketDir
	}
	in.watch(p)
}

// Tool prepares a backup or restore program's command: for a managed server
// started inside a storage-class cgroup (Options.Wrap), the program runs in
// it too, so that its reads and writes on the emulated storage obey the same
// limits as the server's.
func (in *Instance) Tool(c execx.Cmd) execx.Cmd {
	if in.wrap != nil {
		return in.wrap(c)
	}
	return c
}

// Stop implements engine.Instance: it closes dbio's connections and, for a
// managed server, shuts it down as its Shutdown says.
func (in *Instance) Stop(ctx context.Context) error {
	in.stopOnce.Do(func() {
		in.ops.Lock()
		defer in.ops.Unlock()
		in.closed = true
		// Closing a pool fails only in saying goodbye to a server that is
		// already gone, which Exited reports; it is not a failure to stop.
		_, _ = in.db.Close(), in.stats.Close()
		var errs []error
		if p := in.proc.Load(); p != nil {
			errs = append(errs, in.stopServer(ctx, p))
			select {
			case <-p.Done():
				in.watching.Wait()
				close(in.exited)
			default: // it outlived SIGKILL; its watcher may still report its end
			}
		}
		if in.tempSocket != "" {
			errs = append(errs, os.RemoveAll(in.tempSocket))
		}
		in.stopErr = errors.Join(errs...)
	})
	return in.stopErr
}

func (in *Instance) stopServer(ctx context.Context, p *Process) error {
	return p.Stop(ctx, in.shutdown.Signal, in.shutdown.Escalate, in.shutdown.Grace)
}

// ServerPID is the managed server's process ID, 0 for an external server.
func (in *Instance) ServerPID() int {
	if p := in.proc.Load(); p != nil {
		return p.PID()
	}
	return 0
}

// PIDs implements engine.Processes: the server and its children; for an
// existing server, those FindLocal found on this host (none elsewhere).
func (in *Instance) PIDs() []int {
	root := in.externalPID
	if p := in.proc.Load(); p != nil {
		root = p.PID()
	}
	if root == 0 {
		return nil
	}
	pids, err := Tree(in.procRoot, root)
	if err != nil {
		return nil
	}
	return pids
}

// Exited implements engine.Exited: it yields once when the server ends
// without Stop (or a restore) having stopped it, and is closed by Stop. A
// restore restarts the server behind the same channel. For an external
// server it never yields.
func (in *Instance) Exited() <-chan error { return in.exited }

// watch makes p the instance's server and passes on its unexpected end.
func (in *Instance) watch(p *Process) {
	if in.exited == nil {
		in.exited = make(chan error, 1)
	}
	in.proc.Store(p)
	in.watching.Add(1)
	go func() {
		defer in.watching.Done()
		if err, ok := <-p.Exited(); ok {
			select {
			case in.exited <- err:
			default: // an earlier end is still unread
			}
		}
	}()
}

// LogSays reports whether the managed server has logged s since its last
// launch: how a server that dropped its clients without an error code (a
// PANIC on a failed WAL write) tells why. An external server has no log here.
func (in *Instance) LogSays(s string) bool {
	p := in.proc.Load()
	return p != nil && strings.Contains(p.LogTail(400), s)
}

// Reconnect closes the pools' idle connections, which a server restart or a
// dropped database has made useless, so that the next query opens a new one
// instead of failing on a dead one.
func (in *Instance) Reconnect() {
	in.db.SetMaxIdleConns(0)
	in.db.SetMaxIdleConns(in.idle)
	in.stats.SetMaxIdleConns(0)
	in.stats.SetMaxIdleConns(1)
}

// Exclusive runs a logical restore: no physical restore or Stop runs
// meanwhile, and the pools reconnect before and after it.
func (in *Instance) Exclusive(restore func() error) error {
	in.ops.Lock()
	defer in.ops.Unlock()
	if in.closed {
		return errStopped
	}
	in.Reconnect()
	defer in.Reconnect()
	return restore()
}

// Restore is one physical restore of a managed server: the engine's steps
// between stopping the server and starting it on the restored files.
type Restore struct {
	// Src is the backup restored from, for messages.
	Src string
	// Replace sets the server's files aside (recording each in Asides)
	// and puts the backup's in their place.
	Replace func(ctx context.Context, r *Restore) error
	// Launch starts the server on the files in place.
	Launch func(ctx context.Context) (*Process, error)
	// Ready, when set, prepares the started server for dbio (users,
	// database); when it fails the server is stopped again.
	Ready func(ctx context.Context) error
	// Asides maps each directory set aside to where it was moved.
	Asides map[string]string
}

// SetAside moves dir into parent under a "replaced-" name, to be put back
// if the restore fails or removed once it succeeded.
func (r *Restore) SetAside(dir, parent string) error {
	moved, err := MoveAside(dir, parent, "replaced-")
	if err != nil {
		return err
	}
	if r.Asides == nil {
		r.Asides = map[string]string{}
	}
	r.Asides[dir] = moved
	return nil
}

// RunRestore replaces a managed server's files with a backup, in the steps
// every engine takes: stop the server (connections in use fail; the
// workload must be stopped first), set its files aside and put the
// backup's in place (r.Replace), start the server on them, and remove the
// set-aside files. When a step fails the set-aside files go back and the
// server starts on them again. No other restore, and no Stop, runs meanwhile.
func (in *Instance) RunRestore(ctx context.Context, r *Restore) error {
	in.ops.Lock()
	defer in.ops.Unlock()
	old := in.proc.Load()
	if old == nil || in.closed {
		return errStopped
	}
	if err := in.stopServer(ctx, old); err != nil {
		return fmt.Errorf("restore: stop the server: %w", err)
	}
	in.Reconnect()
	if err := r.Replace(ctx, r); err != nil {
		return in.restartAfter(ctx, r, err)
	}
	p, err := r.Launch(ctx)
	if err != nil {
		return in.restartAfter(ctx, r, err)
	}
	if r.Ready != nil {
		if err := r.Ready(ctx); err != nil {
			_ = in.stopServer(context.WithoutCancel(ctx), p)
			return in.restartAfter(ctx, r, err)
		}
	}
	in.watch(p)
	in.Reconnect()
	var errs []error
	for _, moved := range r.Asides {
		errs = append(errs, DropAside(moved))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("restored from %s, but the replaced files could not be removed: %w", r.Src, err)
	}
	return nil
}

// restartAfter handles a failed restore: the files set aside go back in place
// (what the restore put there is dbio's and is removed) and the server starts
// on them again.
func (in *Instance) restartAfter(ctx context.Context, r *Restore, cause error) error {
	ctx = context.WithoutCancel(ctx)
	for dir, moved := range r.Asides {
		if err := PutBack(moved, dir); err != nil {
			return fmt.Errorf("restore from %s: %w; putting the previous files back failed too (%v): they are in %s, and the server is stopped", r.Src, cause, err, moved)
		}
	}
	p, err := r.Launch(ctx)
	if err != nil {
		return fmt.Errorf("restore from %s: %w; the previous files are back in place but the server did not start again: %v", r.Src, cause, err)
	}
	in.watch(p)
	in.Reconnect()
	return fmt.Errorf("restore from %s: %w; the previous files were put back and the server restarted", r.Src, cause)
}

// BackupStep is one program a physical backup runs as the server's user.
type BackupStep struct {
	// What names the step in a failure message, e.g. "pg_basebackup".
	What string
	Cmd  execx.Cmd
	// Explain, when set, makes the program's failure readable.
	Explain func(error) error
}

// RunBackup runs a physical backup's steps into dst, a new or
// empty directory made ready for u, and returns the backup, made with tool
// and holding the bytes counted in dst. What a failed step leaves in a dst
// it created is removed.
func (in *Instance) RunBackup(ctx context.Context, tool, dst string, u User, steps []BackupStep) (engine.BackupResult, error) {
	created, err := PrepareDestination(dst, u)
	if err != nil {
		return engine.BackupResult{}, err
	}
	for _, s := range steps {
		cmd := s.Cmd
		u.Apply(&cmd)
		if _, err := in.Runner.Run(ctx, in.Tool(cmd)); err != nil {
			if created {
				os.RemoveAll(dst)
			}
			if s.Explain != nil {
				err = s.Explain(err)
			}
			return engine.BackupResult{}, ToolError(s.What+" to "+dst, u, dst, err)
		}
	}
	n, err := TreeBytes(dst)
	if err != nil {
		return engine.BackupResult{}, fmt.Errorf("size of the backup in %s: %w", dst, err)
	}
	return engine.BackupResult{Tool: tool, Path: dst, Bytes: n}, nil
}
