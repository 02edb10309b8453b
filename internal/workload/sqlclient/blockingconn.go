package sqlclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// blockingConn is a client connection whose reads and writes are plain
// blocking system calls on the calling goroutine's thread, as a C client
// makes them.
//
// Why: through Go's network poller, a read that finds no answer yet
// returns EAGAIN, parks the goroutine, and the runtime then waits in
// epoll_wait and hands the goroutine back to a thread with futex calls when
// the answer comes: five or six system calls a round trip where libpq and
// libmysqlclient make two or three. A session has one goroutine making one
// round trip at a time, so its thread may as well wait for the answer
// itself, in poll(2) (see waitReadable).
//
// Close (and shutdown) end a read or write blocked in the kernel, as
// closing a net.Conn does: the socket is shut down first, which wakes them,
// and its descriptor is closed once the last call in flight has returned,
// so that a number reused by another file is never read. A read's deadline
// is poll's timeout, a write's the socket's SO_SNDTIMEO, each taken from
// the deadline when the call starts: a deadline moved earlier while a call
// is already blocked does not wake it (Close does).
type blockingConn struct {
	local, remote net.Addr

	mu sync.Mutex
	fd int
	// inFlight counts the reads and writes in the kernel now.
	inFlight int
	// shut is set once the socket is shut down, closed when Close was called.
	shut, closed bool
	// readDeadline and writeDeadline are the net.Conn deadlines; the
	// timeouts record what the socket has now (0: none).
	readDeadline, writeDeadline time.Time
	writeTimeout                time.Duration
	// requested is set by a write and cleared by the read after it, which
	// then waits for the answer before it reads.
	requested atomic.Bool
	// received[start:end] is what a read took off the socket and has not
	// handed out yet. Only reads use them, one at a time (net.Conn).
	received   []byte
	start, end int
}

var _ net.Conn = (*blockingConn)(nil)

// dialBlocking connects as net.Dialer does (the context bounds the
// connect) and returns the connection with blocking reads and writes.
func dialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return blockingFrom(nc)
}

// blockingFrom takes the socket of nc, which it closes, out of the
// network poller: a duplicate of its descriptor, in blocking mode.
func blockingFrom(nc net.Conn) (net.Conn, error) {
	c := &blockingConn{local: nc.LocalAddr(), remote: nc.RemoteAddr(), fd: -1}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		nc.Close()
		return nil, fmt.Errorf("connection %T has no socket to take", nc)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		nc.Close()
		return nil, err
	}
	var dupErr error
	err = raw.Control(func(s uintptr) {
		fd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, s, syscall.F_DUPFD_CLOEXEC, 0)
		if errno != 0 {
			dupErr = os.NewSyscallError("fcntl", errno)
			return
		}
		c.fd = int(fd)
	})
	// The poller's descriptor goes; the duplicate keeps the socket open.
	// O_NONBLOCK belongs to the socket, not the descriptor, so it is
	// cleared only once the poller no longer uses it.
	nc.Close()
	if err == nil {
		err = dupErr
	}
	if err == nil {
		err = syscall.SetNonblock(c.fd, false)
	}
	if err != nil {
		if c.fd >= 0 {
			syscall.Close(c.fd)
		}
		return nil, fmt.Errorf("blocking socket: %w", err)
	}
	return c, nil
}

// enter admits a system call on the socket and returns the deadline it
// runs under; exit must follow.
func (c *blockingConn) enter(read bool) (deadline time.Time, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return time.Time{}, net.ErrClosed
	}
	c.inFlight++
	if read {
		return c.readDeadline, nil
	}
	return c.writeDeadline, nil
}

func (c *blockingConn) exit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight--
	if c.closed && c.inFlight == 0 && c.fd >= 0 {
		syscall.Close(c.fd)
		c.fd = -1
	}
}

// timeout sets the socket's timeout for one direction from the deadline a
// call runs under; false means the deadline has passed.
func (c *blockingConn) timeout(deadline time.Time, opt int, current *time.Duration) (bool, error) {
	var d time.Duration
	if !deadline.IsZero() {
		if d = time.Until(deadline); d <= 0 {
			return false, nil
		}
		// The kernel counts in microseconds; 0 would mean no timeout.
		d = max(d.Truncate(time.Microsecond), time.Microsecond)
	}
	if d == *current {
		return true, nil
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	if err := syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv); err != nil {
		return false, os.NewSyscallError("setsockopt", err)
	}
	*current = d
	return true, nil
}

func (c *blockingConn) Read(p []byte) (int, error) {
	// An answer already received, in part, is handed out first.
	if c.start < c.end {
		n := copy(p, c.received[c.start:c.end])
		c.start += n
		return n, nil
	}
	deadline, err := c.enter(true)
	if err != nil {
		return 0, c.opError("read", err)
	}
	defer c.exit()
	// Just after a request the answer is seldom there yet: wait for it
	// first rather than pay for a read that finds nothing.
	wait := c.requested.Swap(false)
	for {
		if wait {
			if err := c.waitReadable(deadline); err != nil {
				return 0, c.opError("read", err)
			}
		}
		// A driver reading into a small buffer (4 KiB for
		// go-sql-driver/mysql, 8 KiB for pgx) would take a longer answer
		// in as many system calls; it is taken in one, into received.
		into := p
		small := len(p) < receiveSize
		if small {
			if c.received == nil {
				c.received = make([]byte, receiveSize)
			}
			into = c.received
		}
		n, err := recv(c.fd, into)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			wait = true
			continue
		case err != nil:
			return 0, c.opError("read", os.NewSyscallError("recvfrom", err))
		case n == 0 && len(p) > 0:
			if c.isShut() {
				return 0, c.opError("read", net.ErrClosed)
			}
			return 0, io.EOF
		}
		if small {
			c.start, c.end = copy(p, c.received[:n]), n
			return c.start, nil
		}
		return n, nil
	}
}

// receiveSize is how much one read takes off the socket at least: the
// largest answer of a sysbench transaction (a hundred rows of 120
// characters) fits.
const receiveSize = 32 << 10

// waitReadable waits in poll(2) until the socket has something to read (or
// is shut down, or failed), or deadline passes.
//
// Why poll rather than sleeping in read(2), as libpq and libmysqlclient do:
// a read blocked on a Unix socket sleeps on the socket's one wait queue,
// and is woken each time the server takes a request off it (the socket's
// send space frees), only to find nothing and sleep again: two context
// switches a statement instead of one. poll(2) is woken only for what it
// asked for. A TCP socket has no such wakeup, and poll costs it little.
func (c *blockingConn) waitReadable(deadline time.Time) error {
	fds := [1]pollFd{{fd: int32(c.fd), events: pollIn}}
	for {
		var ts *syscall.Timespec
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return os.ErrDeadlineExceeded
			}
			t := syscall.NsecToTimespec(d.Nanoseconds())
			ts = &t
		}
		n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
		switch {
		case errno == syscall.EINTR, errno == 0 && n == 0:
			continue // a signal, or the timeout: the deadline is looked at again
		case errno != 0:
			return os.NewSyscallError("ppoll", errno)
		}
		return nil
	}
}

// pollFd is struct pollfd of poll(2).
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

// pollIn is POLLIN: poll(2) also reports a shut down or failed socket
// (POLLHUP, POLLERR) whatever it asked for, and the read that follows says which.
const pollIn = 0x1

// recv reads what the socket holds into p without waiting: EAGAIN when it
// holds nothing yet.
func recv(fd int, p []byte) (int, error) {
	return transfer(syscall.SYS_RECVFROM, fd, p, syscall.MSG_DONTWAIT)
}

func (c *blockingConn) Write(p []byte) (int, error) {
	deadline, err := c.enter(false)
	if err != nil {
		return 0, c.opError("write", err)
	}
	defer c.exit()
	written := 0
	for written < len(p) {
		ok, err := c.timeout(deadline, syscall.SO_SNDTIMEO, &c.writeTimeout)
		if err != nil {
			return written, c.opError("write", err)
		}
		if !ok {
			return written, c.opError("write", os.ErrDeadlineExceeded)
		}
		n, err := send(c.fd, p[written:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return written, c.opError("write", os.ErrDeadlineExceeded)
		case err == syscall.EPIPE && c.isShut():
			return written, c.opError("write", net.ErrClosed)
		case err != nil:
			return written, c.opError("write", os.NewSyscallError("sendto", err))
		}
		written += n
	}
	c.requested.Store(true)
	return written, nil
}

// send writes p with MSG_NOSIGNAL: a peer gone makes it fail with EPIPE
// instead of raising SIGPIPE.
func send(fd int, p []byte) (int, error) {
	return transfer(syscall.SYS_SENDTO, fd, p, syscall.MSG_NOSIGNAL)
}

// transfer is sendto(2) or recvfrom(2) on a connected socket, by trap.
func transfer(trap uintptr, fd int, p []byte, flags int) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := syscall.Syscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), uintptr(flags), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func (c *blockingConn) isShut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shut
}

// shutdown ends every read and write, now and later, without closing the
// descriptor: what a cancelled run does to a connection still in use.
func (c *blockingConn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shutdownLocked()
}

func (c *blockingConn) shutdownLocked() {
	if c.shut || c.fd < 0 {
		return
	}
	c.shut = true
	// ENOTCONN when the peer already went: nothing is left to wake.
	syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
}

// Close shuts the socket down, which ends a read or write blocked on it,
// and closes it when the last of them has returned.
func (c *blockingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	if c.inFlight > 0 {
		c.shutdownLocked()
		return nil
	}
	err := syscall.Close(c.fd)
	c.fd = -1
	if err != nil {
		return c.opError("close", os.NewSyscallError("close", err))
	}
	return nil
}

func (c *blockingConn) opError(op string, err error) error {
	if errors.Is(err, io.EOF) {
		return err
	}
	return &net.OpError{Op: op, Net: c.remote.Network(), Source: c.local, Addr: c.remote, Err: err}
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readDeadline, c.writeDeadline = t, t
	return nil
}

func (c *blockingConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readDeadline = t
	return nil
}

func (c *blockingConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeDeadline = t
	return nil
}
