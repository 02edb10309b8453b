package tpcc

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"syscall"
	"testing"

	"dbio/internal/metrics"
	"dbio/internal/testenv"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

// socketInPoller says whether nc, a pgx connection's socket, waits in Go's
// network poller: a socket of the poller is non-blocking underneath; a
// blocking one is sqlclient's, with no descriptor to hand out.
func socketInPoller(t *testing.T, nc net.Conn) bool {
	t.Helper()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		if kind := fmt.Sprintf("%T", nc); kind != "*sqlclient.blockingConn" {
			t.Fatalf("the session's socket is a %s, neither the poller's nor sqlclient's blocking socket", kind)
		}
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := raw.Control(func(fd uintptr) {
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		flags = int(r)
		if errno != 0 {
			ferr = errno
		}
	}); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	if flags&syscall.O_NONBLOCK == 0 {
		t.Fatalf("a %T socket in blocking mode: the poller would never be woken for it", nc)
	}
	return true
}

// TestSessionSocketsAsForUserChooses opens TPC-C's PostgreSQL sessions,
// back to back and as the transaction monitor's pooled connections, and
// checks that each one's socket is the kind sqlclient's Dialect.ForUser
// chose for it, under the engine's choice and under both overrides, and
// that a transaction runs on it.
func TestSessionSocketsAsForUserChooses(t *testing.T) {
	testenv.RequireEngine(t, "postgres")
	// Three Ps: the engine's choice gives two blocking sessions, then the poller.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	w, inst := pgServer.loaded(t, 1)
	const sessions = 4
	tests := []struct {
		name    string
		sockets sqlclient.Sockets
		pooled  bool
		// wantPoller is how many of the sessions ForUser should put in the poller.
		wantPoller int
	}{
		{"by engine", sqlclient.SocketsByEngine, false, 2},
		{"by engine, pooled", sqlclient.SocketsByEngine, true, 2},
		{"poller", sqlclient.SocketsPoller, false, sessions},
		{"blocking", sqlclient.SocketsBlocking, false, 0},
		{"blocking, pooled", sqlclient.SocketsBlocking, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w.sockets = tc.sockets
			defer func() { w.sockets = sqlclient.SocketsByEngine }()
			d, err := w.dialect(inst)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			col := metrics.NewCollector(w.TxTypes())
			inPoller := 0
			for n := range sessions {
				var s workload.Session
				if tc.pooled {
					s, err = w.NewConnection(ctx, inst, n, col.NewRecorder())
				} else {
					s, err = w.NewSession(ctx, inst, n, col.NewRecorder())
				}
				if err != nil {
					t.Fatal(err)
				}
				var c *conn
				switch s := s.(type) {
				case *session:
					c = &s.conn
				case *pooledConn:
					c = &s.conn
				}
				got := socketInPoller(t, c.exec.(*pgExecutor).conn.PgConn().Conn())
				if want := d.ForUser(n).InPoller(); got != want {
					t.Errorf("session %d: in the poller %v, ForUser chose %v", n, got, want)
				}
				if got {
					inPoller++
				}
				term, err := w.newTerminal(n)
				if err != nil {
					t.Fatal(err)
				}
				term.Wait()
				if err := term.Run(ctx, &pooledConn{*c}); err != nil {
					t.Errorf("session %d: %v", n, err)
				}
				if err := s.Close(); err != nil {
					t.Errorf("session %d: close: %v", n, err)
				}
			}
			if inPoller != tc.wantPoller {
				t.Errorf("%d of %d sessions in the poller, want %d (GOMAXPROCS %d)", inPoller, sessions, tc.wantPoller, runtime.GOMAXPROCS(0))
			}
			col.Tick()
			var committed, failed int64
			for _, c := range col.StepTotals() {
				committed += c.Committed + c.RolledBack
				failed += c.Failed
			}
			if committed != sessions || failed != 0 {
				t.Errorf("%d transactions ended, %d failed; want %d ended, none failed", committed, failed, sessions)
			}
			if note := w.EngineNotes(inst); len(note) == 0 || note[len(note)-1] != d.SocketsNote() {
				t.Errorf("the results' notes %q do not record the sockets: want %q last", note, d.SocketsNote())
			}
		})
	}
}
