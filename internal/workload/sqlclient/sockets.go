package sqlclient

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync"

	"dbio/internal/vusers"
)

// sessionSockets are the sockets one session's connection dialled. They
// are shut down together when the session's context ends, so that a
// cancelled run ends a statement waiting on the server at once (a
// statement's own context cannot be cancelled, see Conn.Read), and when
// the session is closed while a statement still waits.
type sessionSockets struct {
	// poller dials through Go's network poller instead of blocking
	// system calls (see blockingConn).
	poller bool

	mu    sync.Mutex
	conns []net.Conn
	shut  bool
	stop  func() bool
}

// watchSockets returns the sockets of a session whose context is ctx.
func watchSockets(ctx context.Context, poller bool) *sessionSockets {
	s := &sessionSockets{poller: poller}
	s.stop = context.AfterFunc(ctx, s.shutdown)
	return s
}

// dial is a driver's dial function: the socket is watched.
func (s *sessionSockets) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	var err error
	if s.poller {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
	} else {
		c, err = dialBlocking(ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		end(c)
	}
	s.conns = append(s.conns, c)
	return c, nil
}

// shutdown ends every read and write on the sockets, now and later.
func (s *sessionSockets) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shut = true
	for _, c := range s.conns {
		end(c)
	}
}

// end ends c's reads and writes: a blocking socket is shut down and
// closed by its driver later; a socket in the poller is closed, which is
// safe while a read waits on it.
func end(c net.Conn) {
	if b, ok := c.(*blockingConn); ok {
		b.shutdown()
		return
	}
	c.Close()
}

// release stops watching: the session's connection is closed.
func (s *sessionSockets) release() {
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns = nil
}

// InPoller says whether the session the dialect was given for waits for
// the server through Go's network poller: false on blocking sockets, and
// for SQLite, which waits in cgo calls and has no socket.
func (d *Dialect) InPoller() bool { return d.native != nil && d.poller() }

// SocketsNote says, for the results, which sessions of a workload on d's
// engine wait on blocking sockets and which in the network poller, with
// the rule that sets GOMAXPROCS for them (vusers); empty for an engine
// reached without sockets (SQLite).
func (d *Dialect) SocketsNote() string {
	switch {
	case d.native == nil:
		return ""
	case d.Sockets == SocketsPoller:
		return "Sockets: every session waits for the server through Go's network poller."
	case d.Sockets == SocketsBlocking:
		return "Sockets: every session reads and writes its socket with blocking system calls."
	}
	return fmt.Sprintf("Sockets: a step's first GOMAXPROCS-1 sessions read and write their sockets with blocking system calls; later sessions and background jobs wait through Go's network poller. Each step raises GOMAXPROCS to its sessions + 1, for up to %d sessions per CPU (%d CPUs here, GOMAXPROCS=%d when the run started). When a closed-loop step has two or more blocking sessions of a workload that makes many round trips a transaction (sysbench's, AS3AP's, not TPC-C's), each runs on an OS thread of its own.",
		vusers.SessionsPerCPU, runtime.NumCPU(), runtime.GOMAXPROCS(0))
}
