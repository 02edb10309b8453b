package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"dbio/internal/execx"

	"golang.org/x/sync/errgroup"
)

// Servers are a run's hosts reached: each one's fio version checked
// against dbio's own, and its fio server up, in the order of the hosts
// given.
type Servers struct {
	Shell Shell
	// Servers are the servers of the hosts reached, in the order given.
	Servers []*Server
	// Versions are fio's versions by host name.
	Versions map[string]string
	// Unreached are the hosts ssh could not reach, with ssh's error, in the
	// order given: the run goes on without them.
	Unreached []HostError
}

// HostError is a host that failed, and why.
type HostError struct {
	Host Host
	Err  error
}

// ErrNoHostLeft is returned when no host of a fleet can be reached.
var ErrNoHostLeft = errors.New("no host of the fleet could be reached")

// Unreachable says whether err is ssh failing to reach a host (ssh's own
// exit status, 255: the connection, the host key, the login) rather than a
// command failing there.
func Unreachable(err error) bool {
	var ee *execx.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode == 255
	}
	// A session dbio started and waited for (a lock) ends with exec's own.
	var pe *exec.ExitError
	return errors.As(err, &pe) && pe.ExitCode() == 255
}

// OpenServers reaches every host at once: it checks that fio there is
// localVersion (fio's client and servers of different versions do not
// speak the same protocol, and their figures would not compare), and
// starts each host's fio server or connects to the one the user runs.
// A host ssh cannot reach is left out (Servers.Unreached) and the others
// go on, unless none is left (ErrNoHostLeft). Any other failure (fio
// missing or of another version, a server that does not start) fails the
// whole session: the servers already started are stopped, and the error
// names every host that failed.
func (s Shell) OpenServers(ctx context.Context, hosts []Host, localVersion string) (*Servers, error) {
	sess := &Servers{Shell: s, Versions: map[string]string{}}
	servers := make([]*Server, len(hosts))
	var mu sync.Mutex
	errs := make([]error, len(hosts))
	unreached := make([]error, len(hosts))
	var g errgroup.Group
	for i, h := range hosts {
		g.Go(func() error {
			v, err := s.FioVersion(ctx, h)
			if Unreachable(err) {
				unreached[i] = err
				return nil
			}
			if err != nil {
				errs[i] = fmt.Errorf("%w: check that fio is installed there (%s), or give the host's fio path", err, h.FioProgram())
				return nil
			}
			mu.Lock()
			sess.Versions[h.Name] = v
			mu.Unlock()
			if v != localVersion {
				errs[i] = fmt.Errorf("host %s runs %s, this machine %s: install the same fio version on every host (fio's client and server must match)", h.Name, v, localVersion)
				return nil
			}
			addr, err := s.ServerAddress(ctx, h)
			if err != nil {
				errs[i] = err
				return nil
			}
			srv, err := s.StartServer(ctx, h, addr)
			if err != nil {
				errs[i] = err
				return nil
			}
			servers[i] = srv
			return nil
		})
	}
	g.Wait()
	for i, srv := range servers {
		if srv != nil {
			sess.Servers = append(sess.Servers, srv)
		}
		if unreached[i] != nil {
			sess.Unreached = append(sess.Unreached, HostError{Host: hosts[i], Err: unreached[i]})
		}
	}
	if err := errors.Join(errs...); err != nil {
		sess.Close()
		return nil, err
	}
	if len(sess.Servers) == 0 {
		var why []error
		for _, u := range sess.Unreached {
			why = append(why, u.Err)
		}
		return nil, fmt.Errorf("%w: %w; check that ssh reaches them (ssh -o BatchMode=yes DESTINATION true)", ErrNoHostLeft, errors.Join(why...))
	}
	seen := map[string]string{}
	for _, srv := range sess.Servers {
		if other, ok := seen[srv.Address]; ok {
			sess.Close()
			return nil, fmt.Errorf("hosts %s and %s both resolve to %s: fio's client names a server's report and logs by its address, so give each host its own address", other, srv.Host.Name, srv.Address)
		}
		seen[srv.Address] = srv.Host.Name
	}
	return sess, nil
}

// Close stops every server dbio started, at once, and waits for them.
func (sess *Servers) Close() error { return StopAll(sess.Servers, (*Server).Stop) }

// StopAll stops every one of running that is there (nil is a host whose
// program never started) all at once, since each stop may wait out its
// own timeout, and returns when all have stopped.
func StopAll[T comparable](running []T, stop func(T) error) error {
	var none T
	errs := make([]error, len(running))
	var wg sync.WaitGroup
	for i, r := range running {
		if r == none {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = stop(r)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Server is the session's server of the named host.
func (sess *Servers) Server(host string) *Server {
	for _, srv := range sess.Servers {
		if srv != nil && srv.Host.Name == host {
			return srv
		}
	}
	return nil
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

	// sess is the server's ssh session, when dbio started it.
	sess *Session
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
	srv := &Server{Host: h, Address: addr, Arg: FioServerArg(addr, h.Port())}
	target := net.JoinHostPort(addr, strconv.Itoa(h.Port()))
	if !h.Starts() {
		if err := waitListening(ctx, target, nil); err != nil {
			return nil, fmt.Errorf("host %s: the fio server you run there (fio_server = %q) does not answer at %s: %w; start it with fio --server=%s, or let dbio start it", h.Name, ServerRunning, target, err, srv.Arg)
		}
		return srv, nil
	}
	// Something already listening there would answer for the server dbio
	// starts, which could not bind: the run would measure through another
	// server, or lose the host at its first point.
	if answers(ctx, target) {
		return nil, fmt.Errorf("host %s: something already listens at %s (a fio server of yours?): set fio_server = %q (--fio-server %s) to use it, or choose another port (fio_port, --fio-port)", h.Name, target, ServerRunning, ServerRunning)
	}
	// The server's output is kept for the error of a server that does not
	// start; ctx ends the wait for it to listen, not the server.
	sess, err := s.StartSession(context.WithoutCancel(ctx), h, serverScript(h, srv.Arg), SessionOutput{Combined: true})
	if err != nil {
		return nil, err
	}
	srv.sess, srv.Started = sess, true
	if err := waitListening(ctx, target, sess.Ended()); err != nil {
		srv.Stop()
		return nil, fmt.Errorf("host %s: fio --server=%s: %w: %s", h.Name, srv.Arg, err, strings.TrimSpace(sess.Output()))
	}
	return srv, nil
}

// Stop stops a server dbio started, and every job it runs, and waits until
// they are gone; a server the user runs is left alone. Later calls return
// at once.
func (srv *Server) Stop() error {
	if srv.sess == nil {
		return nil
	}
	if srv.sess.Stop(stopTimeout) {
		return fmt.Errorf("host %s: the fio server did not stop within %s: check for fio processes there", srv.Host.Name, stopTimeout)
	}
	return nil
}

// Alive says whether a server dbio started still runs; a server the user
// runs is taken to (Answers asks it).
func (srv *Server) Alive() bool {
	if srv.sess == nil {
		return true
	}
	select {
	case <-srv.sess.Ended():
		return false
	default:
		return true
	}
}

// EndsWithin says whether a server dbio started ends within d: when fio's
// client has lost a server, its ssh session may take a moment to close.
func (srv *Server) EndsWithin(d time.Duration) bool {
	return srv.sess != nil && srv.sess.EndsWithin(d)
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
