package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"dbio/internal/execx"
)

// Shell runs commands on hosts with the user's ssh.
type Shell struct {
	Exec execx.Runner
	// SSH is the ssh program; empty is "ssh" on the PATH.
	SSH string
}

func (s Shell) program() string {
	if s.SSH == "" {
		return "ssh"
	}
	return s.SSH
}

// SSHConfigProblem is why path cannot be given to ssh -F, or nil. ssh
// that cannot read its configuration makes every host look unreachable,
// and only once a run has begun, so the file is checked before anything is
// written. A relative path is from the directory dbio runs in, as ssh -F
// reads it.
func SSHConfigProblem(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%q: %w: give the path of an ssh_config file", path, errors.Unwrap(err))
	}
	if st.IsDir() {
		return fmt.Errorf("%q is a directory: give the path of an ssh_config file", path)
	}
	return nil
}

// args are ssh's arguments for running script on h: the user's keys, agent
// and configuration (or h's ssh_config), never a prompt.
func (h Host) sshArgs(script string) []string {
	var a []string
	if h.SSHConfig != "" {
		a = append(a, "-F", h.SSHConfig)
	}
	// BatchMode: a key that needs a passphrase nobody can type fails at once
	// instead of hanging the run.
	a = append(a, "-o", "BatchMode=yes", h.Destination)
	if script != "" {
		// The login shell reads the command; sh runs it, whatever that shell is.
		a = append(a, "exec sh -c "+ShellQuote(script))
	}
	return a
}

// Command is the ssh command that runs a POSIX shell script on h, for a
// caller that gives it input or starts it in the background.
func (s Shell) Command(h Host, script string) execx.Cmd {
	return execx.Cmd{Name: s.program(), Args: h.sshArgs(script)}
}

// Run runs a POSIX shell script on h and returns what it printed.
func (s Shell) Run(ctx context.Context, h Host, script string) (string, error) {
	res, err := s.Exec.Run(ctx, execx.Cmd{Name: s.program(), Args: h.sshArgs(script)})
	if err != nil {
		return "", fmt.Errorf("host %s (ssh %s): %w", h.Name, h.Destination, err)
	}
	return string(res.Stdout), nil
}

// FioVersion is what fio --version says on h.
func (s Shell) FioVersion(ctx context.Context, h Host) (string, error) {
	out, err := s.Run(ctx, h, ShellQuote(h.FioProgram())+" --version")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// ServerAddress is where h's fio server listens: h.Address, or the host
// name ssh resolves the destination to (ssh -G, which reads the same
// ssh_config the connection does).
func (s Shell) ServerAddress(ctx context.Context, h Host) (string, error) {
	if h.Address != "" {
		return h.Address, nil
	}
	var args []string
	if h.SSHConfig != "" {
		args = append(args, "-F", h.SSHConfig)
	}
	res, err := s.Exec.Run(ctx, execx.Cmd{Name: s.program(), Args: append(args, "-G", h.Destination)})
	if err != nil {
		return "", fmt.Errorf("host %s: ssh -G %s: %w", h.Name, h.Destination, err)
	}
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		if v, ok := strings.CutPrefix(line, "hostname "); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("host %s: ssh -G %s names no host name: give the host an address", h.Name, h.Destination)
}

// FioServerArg is fio's name of a server at addr:port, as --server and
// --client take it.
func FioServerArg(addr string, port int) string {
	if a, err := netip.ParseAddr(addr); err == nil && a.Is6() && !a.Is4In6() {
		return fmt.Sprintf("ip6:%s,%d", addr, port)
	}
	if _, err := netip.ParseAddr(addr); err == nil {
		return fmt.Sprintf("ip:%s,%d", addr, port)
	}
	return fmt.Sprintf("%s,%d", addr, port)
}

// Server is a host's fio server for a run.
type Server struct {
	Host Host
	// Address is where it listens: the name fio's client gives its logs
	// and report entries.
	Address string
	// Arg is the server as fio's --client takes it.
	Arg string
	// Started says dbio started it (and Stop stops it).
	Started bool

	proc    execx.Process
	stdin   io.Closer
	ended   chan struct{}
	endErr  error
	stderr  *lockedBuffer
	stopped sync.Once
}

// stopTimeout bounds how long Stop waits for a server and its jobs to end.
const stopTimeout = 20 * time.Second

// serverScript runs fio --server in a session of its own and stops that
// whole session (the server, and the jobs it forked) when its standard
// input ends: when dbio closes it, or when dbio or its ssh dies, however
// they die, the connection's end closes it. It exits only once every
// process of the session is gone.
func serverScript(h Host, arg string) string {
	var b strings.Builder
	if h.WorkDir != "" {
		fmt.Fprintf(&b, "cd %s || exit 97\n", ShellQuote(h.WorkDir))
	}
	fmt.Fprintf(&b, "setsid %s --server=%s </dev/null & pid=$!\n", ShellQuote(h.FioProgram()), ShellQuote(arg))
	// The session may not exist yet in the first instant: signal the
	// process too. After 5 s the stragglers are killed. A background list
	// reads /dev/null unless told otherwise: the watcher gets the script's
	// standard input through fd 3. A server that ended by itself ends the
	// watcher too: left waiting for the input's end, it would signal the
	// server's pid long after, when another process may have it. The
	// watcher is this script's unreaped child, so its own pid is safe, and
	// it reads with the shell's own read, so that no child of its outlives it.
	b.WriteString(`exec 3<&0
alive() { kill -0 -$pid 2>/dev/null || kill -0 $pid 2>/dev/null; }
( while read -r _ <&3; do :; done
  kill -TERM -$pid 2>/dev/null || kill -TERM $pid 2>/dev/null
  n=0
  while alive; do
    n=$((n+1)); if [ $n -ge 50 ]; then kill -KILL -$pid 2>/dev/null || kill -KILL $pid 2>/dev/null; fi
    sleep 0.1
  done ) >/dev/null 2>&1 & watcher=$!
wait $pid; status=$?
while alive; do sleep 0.1; done
kill $watcher 2>/dev/null
exit $status
`)
	return b.String()
}

// StartServer starts fio --server on h, listening on addr, and returns once
// it accepts connections; or connects to the one the user runs there. A
// server dbio started runs until Stop, or until dbio ends however it ends.
func (s Shell) StartServer(ctx context.Context, h Host, addr string) (*Server, error) {
	srv := &Server{Host: h, Address: addr, Arg: FioServerArg(addr, h.Port()), ended: make(chan struct{})}
	target := net.JoinHostPort(addr, strconv.Itoa(h.Port()))
	if !h.Starts() {
		if err := waitListening(ctx, target, nil); err != nil {
			return nil, fmt.Errorf("host %s: the fio server you run there (fio_server = %q) does not answer at %s: %w; start it with fio --server=%s, or let dbio start it", h.Name, ServerRunning, target, err, srv.Arg)
		}
		close(srv.ended)
		return srv, nil
	}
	// Something already listening there would answer for the server dbio
	// starts, which could not bind: the run would measure through another
	// server, or lose the host at its first point.
	if answers(ctx, target) {
		return nil, fmt.Errorf("host %s: something already listens at %s (a fio server of yours?): set fio_server = %q (--fio-server %s) to use it, or choose another port (fio_port, --fio-port)", h.Name, target, ServerRunning, ServerRunning)
	}
	// An *os.File as ssh's input, as for a lock: exec hands it over as it
	// is. Through an io.Pipe, exec would copy it in a goroutine that only
	// ends when dbio closes it, and the end of a server whose host or fio
	// died would be seen only once exec gave up waiting for that copy.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", h.Name, err)
	}
	srv.stdin, srv.stderr, srv.Started = pw, &lockedBuffer{}, true
	proc, err := s.Exec.Start(context.WithoutCancel(ctx), execx.Cmd{Name: s.program(), Args: h.sshArgs(serverScript(h, srv.Arg)),
		Stdin: pr, Stdout: srv.stderr, Stderr: srv.stderr,
		// Ctrl-C reaches dbio alone, which stops the server in order; if dbio
		// dies, ssh goes too and the connection's end stops the server.
		Setsid: true, ParentDeathSignal: syscall.SIGTERM})
	pr.Close() // ssh holds its own copy
	if err != nil {
		pw.Close()
		return nil, fmt.Errorf("host %s: %w", h.Name, err)
	}
	srv.proc = proc
	go func() {
		srv.endErr = proc.Wait()
		close(srv.ended)
	}()
	if err := waitListening(ctx, target, srv.ended); err != nil {
		srv.Stop()
		return nil, fmt.Errorf("host %s: fio --server=%s: %w: %s", h.Name, srv.Arg, err, strings.TrimSpace(srv.stderr.String()))
	}
	return srv, nil
}

// Stop stops a server dbio started, and every job it runs, and waits until
// they are gone; a server the user runs is left alone. Later calls return
// at once.
func (srv *Server) Stop() error {
	var err error
	srv.stopped.Do(func() {
		if !srv.Started {
			return
		}
		srv.stdin.Close()
		select {
		case <-srv.ended:
		case <-time.After(stopTimeout):
			srv.proc.Signal(syscall.SIGKILL)
			<-srv.ended
			err = fmt.Errorf("host %s: the fio server did not stop within %s: check for fio processes there", srv.Host.Name, stopTimeout)
		}
	})
	return err
}

// Alive says whether a server dbio started still runs.
func (srv *Server) Alive() bool {
	select {
	case <-srv.ended:
		return !srv.Started
	default:
		return true
	}
}

// EndsWithin says whether a server dbio started ends within d: when fio's
// client has lost a server, its ssh session may take a moment to close.
func (srv *Server) EndsWithin(d time.Duration) bool {
	if !srv.Started {
		return false
	}
	select {
	case <-srv.ended:
		return true
	case <-time.After(d):
		return false
	}
}

// Answers says whether the server accepts a connection now: how dbio
// learns that a server the user runs has gone, whose end it does not see.
func (srv *Server) Answers(ctx context.Context) bool {
	return answers(ctx, net.JoinHostPort(srv.Address, strconv.Itoa(srv.Host.Port())))
}

// answers says whether target (ADDRESS:PORT) accepts a connection now.
func answers(ctx context.Context, target string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// waitListening dials target until it accepts a connection, failing when
// ended closes (the server's session ended) or ctx ends.
func waitListening(ctx context.Context, target string, ended <-chan struct{}) error {
	var d net.Dialer
	deadline, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		attempt, stop := context.WithTimeout(deadline, 2*time.Second)
		conn, err := d.DialContext(attempt, "tcp", target)
		stop()
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ended:
			return errors.New("it ended before listening")
		case <-deadline.Done():
			return fmt.Errorf("not listening after 30 s: %w", err)
		case <-time.After(50 * time.Millisecond): // refused until it listens
		}
	}
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// lockedBuffer collects a program's output from its copying goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 64<<10 {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
