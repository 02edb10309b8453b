package sqlclient

import (
	"context"
	"strings"
	"testing"

	"dbio/internal/metrics"
)

// TestReceive runs a query through Receive on each engine and then goes on
// with the connection: every row was read off it (a row left unread would
// be taken for the next statement's answer), on a result of a few rows and
// on one larger than the drivers' read buffers, prepared and not, and a
// query the server refuses is an error.
func TestReceive(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres", "mariadb"} {
		t.Run(engine, func(t *testing.T) {
			inst := servers.Instance(t, engine)
			d, err := For("w", inst, &Writers{})
			if err != nil {
				t.Fatal(err)
			}
			db := inst.DB()
			if _, err := db.Exec("CREATE TABLE rx (id INTEGER PRIMARY KEY, pad VARCHAR(200) NOT NULL)"); err != nil {
				t.Fatal(err)
			}
			pad := strings.Repeat("x", 200)
			for i := range 600 {
				if _, err := db.Exec(d.Bind("INSERT INTO rx (id, pad) VALUES (?, ?)"), i+1, pad); err != nil {
					t.Fatal(err)
				}
			}
			ctx := context.Background()
			c, err := Connect(ctx, db, d, metrics.NewCollector([]string{"a"}).NewRecorder())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, hi := range []int{3, 600} {
				for range 2 { // the second run uses the prepared statement
					if err := c.Receive(ctx, "SELECT id, pad FROM rx WHERE id BETWEEN ? AND ?", 1, hi); err != nil {
						t.Fatalf("receive %d rows: %v", hi, err)
					}
					if n, err := c.Read(ctx, "SELECT id FROM rx WHERE id <= ?", 5); err != nil || n != 5 {
						t.Fatalf("after receiving %d rows, a read of 5 rows returned %d, %v", hi, n, err)
					}
				}
			}
			if err := c.Receive(ctx, "SELECT no_such_column FROM rx"); err == nil {
				t.Error("a query the server refuses was received without an error")
			}
		})
	}
}
