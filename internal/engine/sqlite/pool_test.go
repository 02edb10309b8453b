package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"dbio/internal/engine"
)

// Every session holds a connection of its own for as long as it runs: the
// pool opens one for each, past the users the preflight allows (batch
// jobs, loaders and checks come beside them), so that no session waits on
// the pool. A pool of 256 left the 257th waiting for ever.
func TestPoolOpensAConnectionForEverySession(t *testing.T) {
	inst := start(t, engine.Options{})
	// Only a bound on the old code's wait, which had no end of its own.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sessions := connectionCeiling + 16
	var held []*sql.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range sessions {
		c, err := inst.DB().Conn(ctx)
		if err != nil {
			t.Fatalf("session %d of %d: %v", i+1, sessions, err)
		}
		held = append(held, c)
	}
	var n int
	if err := held[sessions-1].QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		t.Fatalf("the last session's connection: %v", err)
	}
	if got := inst.DB().Stats().WaitCount; got != 0 {
		t.Errorf("%d sessions waited for a connection", got)
	}
}

// The preflight's limit for SQLite is its ceiling, or what the open-file
// limit holds at two files a connection beside dbio's own, and it says
// which and how to raise it.
func TestConnectionLimit(t *testing.T) {
	tests := []struct {
		openFiles uint64
		want      int
		says      []string
	}{
		{0, connectionCeiling, []string{"SQLite's ceiling in dbio", "one write lock"}},
		{1 << 20, connectionCeiling, []string{"SQLite's ceiling in dbio"}},
		{filesKeptForDBIO + connectionCeiling*filesPerConnection, connectionCeiling, []string{"SQLite's ceiling in dbio"}},
		{2048, (2048 - filesKeptForDBIO) / filesPerConnection, []string{"open-file limit of 2048 (ulimit -n)", "ulimit -n 3072", "up to 1024"}},
		{1000, 0, []string{"open-file limit of 1000"}},
	}
	for _, tt := range tests {
		got, from := connectionLimit(tt.openFiles)
		if got != tt.want {
			t.Errorf("connectionLimit(%d) = %d, want %d", tt.openFiles, got, tt.want)
		}
		for _, s := range tt.says {
			if !strings.Contains(from, s) {
				t.Errorf("connectionLimit(%d) says %q, lacking %q", tt.openFiles, from, s)
			}
		}
	}
	if limit, _ := (Engine{}).MaxConnections(engine.Options{}); limit < 1 || limit > connectionCeiling {
		t.Errorf("this process's SQLite limit %d", limit)
	}
}
