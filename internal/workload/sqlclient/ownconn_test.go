package sqlclient

import (
	"context"
	"testing"
	"time"
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
	for _, tc := range []struct{ engine, sleep, running string }{
		{"postgres", "SELECT pg_sleep(600)",
			"SELECT COUNT(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)' AND state = 'active'"},
		{"mariadb", "SELECT SLEEP(600)",
			"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(600)' AND COMMAND <> 'Sleep'"},
	} {
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
				var watched *sessionSockets
				var sleep func() error
				var closeConn func() error
				if tc.engine == "postgres" {
					c, err := d.ConnectPgx(ctx, inst.DSN())
					if err != nil {
						t.Fatal(err)
					}
					watched, closeConn = c.sockets, c.Close
					sleep = func() error {
						_, err := c.Exec(context.WithoutCancel(ctx), tc.sleep)
						return err
					}
				} else {
					c, err := d.ConnectMySQL(ctx, inst.DSN())
					if err != nil {
						t.Fatal(err)
					}
					watched, closeConn = c.sockets, c.Close
					sleep = func() error {
						_, err := c.ExecContext(context.WithoutCancel(ctx), tc.sleep)
						return err
					}
				}
				defer closeConn()
				if len(watched.conns) != 1 {
					t.Fatalf("the connection dialled %d sockets, want 1", len(watched.conns))
				}
				if _, blocking := watched.conns[0].(*blockingConn); blocking != (sockets == SocketsBlocking) {
					t.Fatalf("the connection's socket is a %T with sockets %v", watched.conns[0], sockets)
				}
				done := make(chan error, 1)
				go func() { done <- sleep() }()
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				for queryInt(t, inst.DB(), tc.running) == 0 {
					select {
					case err := <-done:
						t.Fatalf("the statement ended before it was stopped: %v", err)
					case <-tick.C:
					}
				}
				cancel()
				select {
				case err := <-done:
					if err == nil {
						t.Error("the stopped statement returned no error")
					}
				case <-time.After(time.Minute):
					t.Fatal("the statement still runs a minute after the run was cancelled")
				}
			})
		}
	}
}
