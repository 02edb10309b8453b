package sqlclient

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"dbio/internal/metrics"
)

// socketPair is a blocking connection and the plain net.Conn at its other
// end, over a Unix socket in t's directory.
func socketPair(t *testing.T) (*blockingConn, net.Conn) {
	t.Helper()
	return connPair(t, "unix", filepath.Join(t.TempDir(), "s"))
}

// tcpPair is socketPair over TCP on the loopback, the transport of a
// server reached by host and port.
func tcpPair(t *testing.T) (*blockingConn, net.Conn) {
	t.Helper()
	return connPair(t, "tcp", "127.0.0.1:0")
}

// connPair dials a listener on address with a blocking connection and
// returns both ends.
func connPair(t *testing.T, network, address string) (*blockingConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	nc, err := dialBlocking(context.Background(), network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	c := nc.(*blockingConn)
	t.Cleanup(func() { c.Close(); peer.Close() })
	return c, peer
}

// TestBlockingConnIsBlocking checks that the socket left the poller: its
// descriptor is in blocking mode, and the poller's one is gone.
func TestBlockingConnIsBlocking(t *testing.T) {
	c, _ := socketPair(t)
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(c.fd), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if flags&syscall.O_NONBLOCK != 0 {
		t.Errorf("descriptor %d is non-blocking", c.fd)
	}
	flags, _, errno = syscall.Syscall(syscall.SYS_FCNTL, uintptr(c.fd), syscall.F_GETFD, 0)
	if errno != 0 || flags&syscall.FD_CLOEXEC == 0 {
		t.Errorf("descriptor %d is not close-on-exec (flags %#x, %v)", c.fd, flags, errno)
	}
	if c.RemoteAddr() == nil || c.RemoteAddr().Network() != "unix" {
		t.Errorf("remote address %v", c.RemoteAddr())
	}
}

// TestBlockingConnReadWrite sends each way, more than a socket buffer
// holds, and reads the end of the stream when the peer closes.
func TestBlockingConnReadWrite(t *testing.T) {
	c, peer := socketPair(t)
	big := []byte(strings.Repeat("0123456789abcdef", 1<<16)) // 1 MiB
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		got <- b
	}()
	if n, err := c.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write: %d, %v; want %d bytes", n, err, len(big))
	}
	if b := <-got; string(b) != string(big) {
		t.Fatalf("peer read %d bytes, not what was written", len(b))
	}
	go func() {
		peer.Write(big)
		peer.Close()
	}()
	b, err := io.ReadAll(c)
	if err != nil || string(b) != string(big) {
		t.Fatalf("ReadAll: %d bytes, %v; want %d and the end of the stream", len(b), err, len(big))
	}
}

// TestBlockingConnDeadlines checks that a deadline in force when a call
// starts bounds it, as net.Conn's do, and that lifting it lets the call wait.
func TestBlockingConnDeadlines(t *testing.T) {
	c, peer := socketPair(t)
	buf := make([]byte, 10)
	for _, tc := range []struct {
		name     string
		deadline time.Time
	}{
		{"past", time.Now().Add(-time.Second)},
		{"soon", time.Now().Add(20 * time.Millisecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.SetReadDeadline(tc.deadline)
			_, err := c.Read(buf)
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Read: %v, want a timeout", err)
			}
		})
	}
	// A full socket makes a write wait; its deadline ends it.
	c.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := c.Write(make([]byte, 64<<20)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write to a full socket: %v, want a timeout", err)
	}
	c.SetDeadline(time.Time{})
	go peer.Write([]byte("after"))
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "after" {
		t.Fatalf("Read without a deadline: %q, %v", buf[:n], err)
	}
}

// TestBlockingConnCloseEndsABlockedRead closes the connection while a read
// waits in the kernel for data that never comes: the read ends, and the
// descriptor is closed once it has.
func TestBlockingConnCloseEndsABlockedRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(c *blockingConn)
	}{
		{"close", func(c *blockingConn) { c.Close() }},
		{"shutdown", (*blockingConn).shutdown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := socketPair(t)
			done := make(chan error, 1)
			go func() {
				_, err := c.Read(make([]byte, 10))
				done <- err
			}()
			waitInKernel(t, c)
			tc.stop(c)
			if err := <-done; !errors.Is(err, net.ErrClosed) {
				t.Errorf("blocked Read ended with %v, want %v", err, net.ErrClosed)
			}
			if _, err := c.Write([]byte("x")); err == nil {
				t.Error("Write after the stop succeeded")
			}
			c.Close()
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.fd != -1 {
				t.Errorf("descriptor %d still open after Close", c.fd)
			}
		})
	}
}

// waitInKernel waits until a call on c is in flight: the reader has
// entered; it may be a moment from the kernel, which a stop covers too
// (a shut socket reads as closed).
func waitInKernel(t *testing.T, c *blockingConn) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		c.mu.Lock()
		n := c.inFlight
		c.mu.Unlock()
		if n > 0 {
			return
		}
		<-tick.C
	}
}

// sleepers are a statement each server engine answers only after ten
// minutes, and a query counting the sessions running it.
var sleepers = []struct{ engine, sleep, running string }{
	{"postgres", "SELECT pg_sleep(600)",
		"SELECT COUNT(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)' AND state = 'active'"},
	{"mariadb", "SELECT SLEEP(600)",
		"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(600)' AND COMMAND <> 'Sleep'"},
}

// stopWhileRunning starts run, a sleeper's statement, waits until the
// server runs it (running counts it on db), then calls stop: run must
// return an error within a minute, which for a ten-minute statement is
// the stop's doing.
func stopWhileRunning(t *testing.T, db *sql.DB, running string, run func() error, stop func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run() }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for queryInt(t, db, running) == 0 {
		select {
		case err := <-done:
			t.Fatalf("the statement ended before it was stopped: %v", err)
		case <-tick.C:
		}
	}
	stop()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the stopped statement returned no error")
		}
	case <-time.After(time.Minute):
		t.Fatal("the statement still runs a minute after the stop")
	}
}

// TestCancelEndsABlockedStatement runs a statement the server answers only
// after ten minutes, on a session of each server engine with each kind of
// socket, and ends it by
// cancelling the session's context, as Ctrl-C cancels a run's, and by
// closing the session, as a step's stop does: the statement returns an
// error at once though its own context cannot be cancelled.
func TestCancelEndsABlockedStatement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	for _, tc := range sleepers {
		for _, mode := range []struct {
			stop   string
			poller bool
		}{{"cancel", false}, {"close", false}, {"cancel", true}, {"close", true}} {
			stop := mode.stop
			name := tc.engine + "/" + stop + "/blocking"
			if mode.poller {
				name = tc.engine + "/" + stop + "/poller"
			}
			t.Run(name, func(t *testing.T) {
				inst := servers.Instance(t, tc.engine)
				d, err := For("w", inst, &Writers{})
				if err != nil {
					t.Fatal(err)
				}
				// Either kind of socket, whichever the engine uses by default.
				d.Sockets = SocketsBlocking
				if mode.poller {
					d.Sockets = SocketsPoller
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				c, err := Connect(ctx, inst.DB(), d, metrics.NewCollector([]string{"a"}).NewRecorder())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if s := sockets(c); s == nil || len(s.conns) != 1 {
					t.Fatalf("the session's connection has no socket of its own: %+v", s)
				} else if _, blocking := s.conns[0].(*blockingConn); blocking == mode.poller {
					t.Fatalf("the session's socket is a %T with sockets %v", s.conns[0], d.Sockets)
				}
				stopWhileRunning(t, inst.DB(), tc.running, func() error {
					_, err := c.Read(ctx, tc.sleep)
					return err
				}, func() {
					if stop == "cancel" {
						cancel()
					} else {
						c.Close()
					}
				})
			})
		}
	}
}

// sockets are the blocking sockets of c's connection, nil through the poller.
func sockets(c *Conn) *sessionSockets {
	switch l := c.link.(type) {
	case *pgxLink:
		return l.sockets
	case *driverLink:
		return l.sockets
	}
	return nil
}

// TestBlockingConnWrites checks what a write to a peer that reads nothing
// returns, on each transport: when its deadline passes, the count of
// bytes the peer then receives (a partial write counts what the kernel
// took, no more and no less); when the connection is closed or shut down
// under it, at once, closed.
func TestBlockingConnWrites(t *testing.T) {
	for _, pair := range []struct {
		name string
		open func(*testing.T) (*blockingConn, net.Conn)
	}{{"unix", socketPair}, {"tcp", tcpPair}} {
		t.Run(pair.name+"/deadline", func(t *testing.T) {
			c, peer := pair.open(t)
			// Allocated before the deadline is set: zeroing 64 MiB on a
			// busy machine can take the whole 50 ms, and the write then
			// times out before sending anything.
			p := make([]byte, 64<<20)
			c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
			n, err := c.Write(p)
			if !errors.Is(err, os.ErrDeadlineExceeded) || n <= 0 || n >= 64<<20 {
				t.Fatalf("Write of 64 MiB to a peer reading nothing: %d bytes, %v; want part of it and a timeout", n, err)
			}
			c.Close()
			got, err := io.Copy(io.Discard, peer)
			if err != nil || got != int64(n) {
				t.Errorf("the peer received %d bytes (%v), the write said %d", got, err, n)
			}
		})
		for _, stop := range []struct {
			name string
			stop func(c *blockingConn)
		}{{"close", func(c *blockingConn) { c.Close() }}, {"shutdown", (*blockingConn).shutdown}} {
			t.Run(pair.name+"/"+stop.name, func(t *testing.T) {
				c, _ := pair.open(t)
				done := make(chan error, 1)
				go func() {
					_, err := c.Write(make([]byte, 64<<20))
					done <- err
				}()
				waitInKernel(t, c)
				stop.stop(c)
				if err := <-done; !errors.Is(err, net.ErrClosed) {
					t.Errorf("blocked Write ended with %v, want %v", err, net.ErrClosed)
				}
			})
		}
	}
}

// TestBlockingConnSleepsOnceARoundTrip checks that a read waiting for the
// answer to a request sleeps once, on a Unix socket as on TCP: the server
// taking the request off the socket frees the client's send space, which
// wakes a thread asleep in read(2) for nothing, then the answer wakes it
// again, as it does not wake one in poll(2). The peer here takes each
// request only once the client's thread sleeps, and answers only once it
// sleeps again, so that each wakeup shows as a context switch.
func TestBlockingConnSleepsOnceARoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		pair func(*testing.T) (*blockingConn, net.Conn)
	}{{"unix", socketPair}, {"tcp", tcpPair}} {
		t.Run(tc.name, func(t *testing.T) {
			c, peer := tc.pair(t)
			const trips = 200
			tids := make(chan int, 1)
			done := make(chan error, 1)
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				tids <- syscall.Gettid()
				before, err := voluntarySwitches(syscall.Gettid())
				if err != nil {
					done <- err
					return
				}
				buf := make([]byte, 16)
				for range trips {
					if _, err := c.Write([]byte("q")); err != nil {
						done <- err
						return
					}
					if _, err := io.ReadFull(c, buf[:1]); err != nil {
						done <- err
						return
					}
				}
				after, err := voluntarySwitches(syscall.Gettid())
				if err != nil {
					done <- err
					return
				}
				if per := float64(after-before) / trips; per > 1.5 {
					done <- fmt.Errorf("the reading thread slept %.2f times a round trip; want about 1", per)
					return
				}
				done <- nil
			}()
			tid := <-tids
			buf := make([]byte, 1)
			for range trips {
				if err := waitAsleep(tid, done); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(peer, buf); err != nil {
					t.Fatal(err)
				}
				if err := waitAsleep(tid, done); err != nil {
					t.Fatal(err)
				}
				if _, err := peer.Write([]byte("a")); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// waitAsleep waits until thread tid of this process sleeps (state S in its
// stat file), or the client reports an error on done first.
func waitAsleep(tid int, done chan error) error {
	stat := fmt.Sprintf("/proc/self/task/%d/stat", tid)
	for {
		select {
		case err := <-done:
			done <- err
			if err == nil {
				err = errors.New("the client finished early")
			}
			return err
		default:
		}
		b, err := os.ReadFile(stat)
		if err != nil {
			return err
		}
		// The state follows the command name, which is in parentheses.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && b[i+2] == 'S' {
			return nil
		}
		runtime.Gosched()
	}
}

// voluntarySwitches is how many times thread tid has slept.
func voluntarySwitches(tid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("no voluntary_ctxt_switches in /proc/self/task/%d/status", tid)
}

// TestBlockingConnTakesAnAnswerInOneRead checks that a driver reading an
// answer longer than its buffer gets it in pieces from one read of the
// socket, in order.
func TestBlockingConnTakesAnAnswerInOneRead(t *testing.T) {
	c, peer := socketPair(t)
	answer := []byte(strings.Repeat("0123456789", 2000)) // 20,000 bytes, as a range query's rows
	if _, err := peer.Write(answer); err != nil {
		t.Fatal(err)
	}
	// The peer's one write is in the socket now; the first read takes it.
	if err := waitBuffered(c.fd, len(answer)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var got []byte
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, buf[:n]...)
	if held := c.end - c.start; held != len(answer)-n {
		t.Fatalf("after a read of %d bytes the connection holds %d, want the other %d", n, held, len(answer)-n)
	}
	for len(got) < len(answer) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != string(answer) {
		t.Fatal("the pieces read are not the answer written")
	}
}

// waitBuffered waits until socket fd holds n bytes to read (FIONREAD).
func waitBuffered(fd, n int) error {
	for {
		var have int32
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&have))); errno != 0 {
			return errno
		}
		if int(have) >= n {
			return nil
		}
		runtime.Gosched()
	}
}
