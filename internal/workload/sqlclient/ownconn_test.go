package sqlclient

import (
	"context"
	"testing"
)

// TestOwnConnectionsEndABlockedStatement opens the connections a workload
// opens itself (TPC-C's: ConnectPgx on PostgreSQL, ConnectMySQL on MariaDB)
// with each kind of socket, runs a statement the server answers only after
// ten minutes on a context that cannot be cancelled (as TPC-C's
// transactions run), and cancels the session's context, as Ctrl-C cancels
// a run's: the socket is of the kind the dialect chose, and the statement
// returns an error at once.
func TestOwnConnectionsEndABlockedStatement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	for _, tc := range sleepers {
		for _, sockets := range []Sockets{SocketsBlocking, SocketsPoller} {
			name := tc.engine + "/blocking"
			if sockets == SocketsPoller {
				name = tc.engine + "/poller"
			}
			t.Run(name, func(t *testing.T) {
				inst := servers.Instance(t, tc.engine)
				d, err := For("w", inst, &Writers{})
				if err != nil {
					t.Fatal(err)
				}
				d.Sockets = sockets
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				// The statement's own context cannot be cancelled.
				stmtCtx := context.WithoutCancel(ctx)
				var watched *sessionSockets
				var sleep func() error
				if tc.engine == "postgres" {
					c, err := d.ConnectPgx(ctx, inst.DSN())
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					watched = c.sockets
					sleep = func() error { _, err := c.Exec(stmtCtx, tc.sleep); return err }
				} else {
					c, err := d.ConnectMySQL(ctx, inst.DSN())
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					watched = c.sockets
					sleep = func() error { return c.Exec(stmtCtx, tc.sleep) }
				}
				if len(watched.conns) != 1 {
					t.Fatalf("the connection dialled %d sockets, want 1", len(watched.conns))
				}
				if _, blocking := watched.conns[0].(*blockingConn); blocking != (sockets == SocketsBlocking) {
					t.Fatalf("the connection's socket is a %T with sockets %v", watched.conns[0], sockets)
				}
				stopWhileRunning(t, inst.DB(), tc.running, sleep, cancel)
			})
		}
	}
}
