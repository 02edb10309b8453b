package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"dbio/internal/engine"
	"dbio/internal/execx"
	"dbio/internal/target"
)

const (
	// startTimeout allows for crash recovery when a reused instance was not
	// shut down cleanly; a server that fails is noticed at once, not after this.
	startTimeout = 5 * time.Minute
	// portAttempts bounds retries when another program takes the chosen port first.
	portAttempts = 5
)

// Layout is where a managed instance keeps its files.
type Layout struct {
	Base string // dbio's marked directory on the data target
	Data string // the data directory
	Log  string // the log (WAL, redo) directory on the log target, "" when the log stays in Data
	Run  string // the preferred socket directory, and the server's run files
}

// Dirs name an engine's directories in dbio's directory on the targets.
type Dirs struct {
	// Data is the instance's subdirectory on the data target, e.g. "postgres".
	Data string
	// Log is its subdirectory on a separate log target, e.g. "postgres-wal",
	// and LogDir the log's directory inside it, e.g. "pg_wal".
	Log, LogDir string
	// LogWhat names the log in messages: "WAL", "redo log".
	LogWhat string
}

// Claim claims dbio's directories for an instance on p, removing them first
// (and only them) when a fresh instance is asked for. The caller has made
// sure that no server runs on them.
func (d Dirs) Claim(p engine.Placement, fresh bool) (Layout, error) {
	logT := p.LogTarget()
	separate := logT.Dir != p.Data.Dir
	if fresh {
		if err := p.Data.RemoveSub(d.Data); err != nil {
			return Layout{}, fmt.Errorf("remove the previous instance: %w", err)
		}
		if separate {
			if err := logT.RemoveSub(d.Log); err != nil {
				return Layout{}, fmt.Errorf("remove the previous instance's %s: %w", d.LogWhat, err)
			}
		}
	}
	base, err := p.Data.Sub(d.Data)
	if err != nil {
		return Layout{}, err
	}
	l := Layout{Base: base, Data: filepath.Join(base, "data"), Run: filepath.Join(base, "run")}
	if separate {
		logBase, err := logT.Sub(d.Log)
		if err != nil {
			return Layout{}, err
		}
		l.Log = filepath.Join(logBase, d.LogDir)
	}
	return l, nil
}

// CheckReach checks that u, who runs the server, reaches the instance's
// directories on every target.
func (l Layout) CheckReach(u User) error {
	if err := u.CheckReach(l.Base); err != nil {
		return err
	}
	if l.Log != "" {
		return u.CheckReach(filepath.Dir(l.Log))
	}
	return nil
}

// LogPath is where the server named name writes its log: in logDir
// (normally the run's results directory) when given, else in base.
func LogPath(logDir, base, name string) (string, error) {
	if logDir == "" {
		return filepath.Join(base, name+".log"), nil
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return "", fmt.Errorf("server log directory: %w", err)
	}
	return filepath.Join(logDir, name+".log"), nil
}

// WritePrivate writes a file only u (and root) may read, never through a link.
func (u User) WritePrivate(path, content string) error {
	if err := target.WriteFile(path, []byte(content), 0o600); err != nil {
		return err
	}
	return u.Own(path)
}

// RandomPassword returns a new password for dbio's account on a managed server.
func RandomPassword() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// LaunchOnFreePort starts a server on a free loopback port from freePort
// with launch, trying another port, up to portAttempts times in all, when
// another program took the chosen one first.
func LaunchOnFreePort(freePort func() (int, error), launch func(port int) (*Process, error)) (*Process, error) {
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p, err := launch(port)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, ErrAddressInUse) || attempt == portAttempts {
			return nil, err
		}
	}
}

// Launcher is how an engine's managed server is started, at first and again
// after a restore has replaced its files; the engine gives the command and
// how to tell that the server accepts connections.
type Launcher struct {
	// Name names the server in messages, e.g. "postgres" or "mariadb".
	Name   string
	Runner execx.Runner
	// User runs the server.
	User User
	// Wrap, when set, wraps the server's command (engine.Options.Wrap).
	Wrap    func(execx.Cmd) execx.Cmd
	LogPath string
	// Shutdown is how the engine's server is asked to end.
	Shutdown Shutdown
}

// Launch starts cmd as the server, run by l.User and wrapped as l.Wrap
// says, and waits until ready succeeds; a server that does not come up is
// stopped again. Should dbio die without stopping it, the server gets the
// shutdown signal Stop asks first.
func (l Launcher) Launch(ctx context.Context, cmd execx.Cmd, ready func(context.Context) error) (*Process, error) {
	cmd.ParentDeathSignal = l.Shutdown.Signal
	l.User.Apply(&cmd)
	if l.Wrap != nil {
		cmd = l.Wrap(cmd)
	}
	proc, err := Launch(ctx, l.Runner, l.Name, cmd, l.LogPath)
	if err != nil {
		return nil, err
	}
	if err := proc.WaitReady(ctx, startTimeout, ready); err != nil {
		_ = proc.Stop(context.WithoutCancel(ctx), l.Shutdown.Signal, l.Shutdown.Escalate, 10*time.Second)
		return nil, err
	}
	return proc, nil
}

// DumpFile finds a logical backup: src itself, or name inside the directory src.
func DumpFile(src, name string) (string, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	if !fi.IsDir() {
		return src, nil
	}
	file := filepath.Join(src, name)
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("restore: %s holds no %s: give the file or directory a logical backup wrote", src, name)
	}
	return file, nil
}

// Begin is what an engine's managed start gives BeginManaged.
type Begin struct {
	// Name names the server in messages and its log file, e.g. "postgres".
	Name string
	// Previous is the instance whose server an earlier dbio may have left running.
	Previous Previous
	// Shutdown is how the engine's server is asked to end.
	Shutdown Shutdown
	// Users are the accounts the server may run as when dbio runs as root:
	// the first that exists (Choose).
	Users []string
	// Claim claims the engine's directories (Dirs.Claim), refusing when a
	// server still runs on them.
	Claim func() (Layout, error)
	// SocketName is the longest name the server gives its socket.
	SocketName string
}

// Managed is a managed start under way: the instance taken over and the
// server's user, directories, socket directory and log, from which the
// engine launches its server, and which the instance's supervision keeps.
type Managed struct {
	Launcher
	Layout Layout
	// Leftover says that a server an earlier dbio left running was
	// stopped; "" when there was none.
	Leftover string
	// SocketDir is the server's socket directory; TempSocket says that it
	// is outside dbio's own (see SocketDir).
	SocketDir  string
	TempSocket bool
	// MemoryCapped says that the server runs under a memory cap
	// (engine.Options.ServerMemory), which a copy of its files must not
	// get round (see Pristine.DropCache).
	MemoryCapped bool
	procRoot     string
}

// BeginManaged is how every managed start begins, before the engine
// creates or checks its instance: it takes the instance over (the server's
// user, a leftover server stopped), claims its directories, checks that the
// server's user reaches them, chooses the socket directory and where the
// server logs, and hands the user to o.RunAs. When the start fails later,
// Managed.RemoveOnFailure removes a temporary socket directory.
func (e *Engine) BeginManaged(ctx context.Context, o engine.Options, b Begin) (_ *Managed, err error) {
	user, leftover, err := takeOver(ctx, e.ProcRoot, b.Previous, b.Shutdown, o.Notice, b.Users...)
	if err != nil {
		return nil, err
	}
	l, err := b.Claim()
	if err != nil {
		return nil, err
	}
	if err := l.CheckReach(user); err != nil {
		return nil, err
	}
	sockDir, temp, err := SocketDir(l.Run, b.SocketName, "/tmp", user)
	if err != nil {
		return nil, err
	}
	m := &Managed{Layout: l, Leftover: leftover, SocketDir: sockDir, TempSocket: temp, procRoot: e.ProcRoot, MemoryCapped: o.ServerMemory > 0,
		Launcher: Launcher{Name: b.Name, Runner: e.Runner, User: user, Wrap: o.Wrap, Shutdown: b.Shutdown}}
	defer m.RemoveOnFailure(&err)
	if m.LogPath, err = LogPath(o.LogDir, l.Base, b.Name); err != nil {
		return nil, err
	}
	if err := grantUser(o, user); err != nil {
		return nil, err
	}
	return m, nil
}

// RemoveOnFailure removes a temporary socket directory when the start it
// was made for fails, which *err says once the start returns.
func (m *Managed) RemoveOnFailure(err *error) {
	if *err != nil && m.TempSocket {
		os.RemoveAll(m.SocketDir)
	}
}

// Supervise makes proc, the server the start launched, the managed server
// of in, looked after as the start says.
func (m *Managed) Supervise(in *Instance, proc *Process) {
	in.Supervise(proc, Supervision{ProcRoot: m.procRoot, Shutdown: m.Shutdown, SocketDir: m.SocketDir, TempSocket: m.TempSocket, Wrap: m.Wrap})
}

// Notes are what every managed instance records of itself in its Info:
// where its server's log is, a server an earlier dbio left running that
// was stopped, the settings that decide whether a commit survives a crash
// (durability, as the server reported them), and a socket directory
// outside dbio's own.
func (m *Managed) Notes(durability string) []string {
	notes := []string{"server log: " + m.LogPath}
	for _, n := range []string{m.Leftover, durability} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	if m.TempSocket {
		notes = append(notes, "socket directory "+m.SocketDir+": dbio's own directory is too deep for a Unix socket path")
	}
	return notes
}

// Previous names the instance a managed start takes over: its directory,
// its server's pid file, and the server's name for messages.
type Previous struct {
	Dir, PidFile, Name string
}

// takeOver chooses the server's user (Choose: the first of candidates when
// dbio runs as root) and stops a server an earlier dbio left running on the
// instance (StopLeftover, asking it as s says), telling notice, when set, at
// once. The note returned says so in the results, "" when there was none.
func takeOver(ctx context.Context, procRoot string, prev Previous, s Shutdown, notice func(string), candidates ...string) (u User, note string, err error) {
	if u, err = Choose(os.Geteuid(), candidates...); err != nil {
		return User{}, "", err
	}
	if note, err = StopLeftover(ctx, procRoot, prev.PidFile, prev.Dir, prev.Name, s.Signal, s.Grace); err != nil {
		return User{}, "", err
	}
	if note != "" && notice != nil {
		notice(note)
	}
	return u, note, nil
}

// grantUser hands the user a managed server will run as to o.RunAs, when
// set, before the server starts.
func grantUser(o engine.Options, u User) error {
	if o.RunAs == nil {
		return nil
	}
	return o.RunAs(u.UID, u.GID)
}

// Transport is the transport o asks for, socket when it names none.
func Transport(o engine.Options) string {
	if o.Transport == "" {
		return "socket"
	}
	return o.Transport
}

// DefaultDatabase is the database dbio creates in a managed instance when
// Options.Database is empty.
const DefaultDatabase = "dbio"

// Database is the database dbio works in: o.Database, else DefaultDatabase.
func Database(o engine.Options) string {
	if o.Database != "" {
		return o.Database
	}
	return DefaultDatabase
}

// Recreate empties the instance's data and log directories and makes them
// again for u, so that creating the instance starts clear of what an
// interrupted earlier attempt left; they are dbio's own directories.
func (l Layout) Recreate(u User) error {
	for _, d := range []string{l.Data, l.Log} {
		if d == "" {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := u.MakeDir(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}
