package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SQLite serves every user a run asks for up to its ceiling, each on a
// connection of its own (a pool of 256 once left the 257th user waiting
// with no end), and a run asking for more is refused before anything is
// written, with the reason.
func TestSQLiteUsersBeyondTheOldPool(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real steps")
	}
	tests := []struct {
		name string
		args []string
	}{
		{"sysbench, 300 users", []string{"sysbench", "--users", "300"}},
		{"as3ap, a climb past 256 users beside its batch jobs", []string{"as3ap", "--rows", "1000", "--start", "250", "--add", "10", "--max-users", "270", "--ceiling", "1h", "--batch-jobs", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, res := t.TempDir(), t.TempDir()
			// Only a bound on the old code's wait, which had no end of its own.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var out bytes.Buffer
			args := append(tt.args, "--target", dir, "--results", res, "--ramp-time", "1s", "--runtime", "1s")
			if code := run(ctx, testApp(&out), args); code != exitOK {
				t.Fatalf("exit code %d:\n%s", code, out.String())
			}
			if !strings.Contains(out.String(), "COMPLETED") {
				t.Errorf("the run did not complete:\n%s", out.String())
			}
		})
	}
}

func TestSQLiteUsersBeyondItsCeilingAreRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"tpcc", []string{"tpcc", "--users", "1,100000"}, "--users: 100000 users with a connection each"},
		{"as3ap's climb", []string{"as3ap", "--max-users", "5000"}, "--users: 4996 users with a connection each"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir, res := filepath.Join(root, "target"), filepath.Join(root, "results")
			os.Mkdir(dir, 0o755)
			os.Mkdir(res, 0o755)
			before := tree(t, root)
			var out bytes.Buffer
			args := append(tt.args, "--target", dir, "--results", res)
			if code := run(context.Background(), testApp(&out), args); code != exitUsage {
				t.Errorf("exit code %d, want %d:\n%s", code, exitUsage, out.String())
			}
			for _, want := range []string{tt.want, "max_connections 1024, SQLite's ceiling in dbio", "one write lock", "run fewer users"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output does not say %q:\n%s", want, out.String())
				}
			}
			if after := tree(t, root); after != before {
				t.Errorf("a refused run wrote:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}
