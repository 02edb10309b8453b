package runner

import (
	"strings"
	"testing"
	"time"
)

// TestHolderWritesNoPassword: the command recorded in a target's lock stops
// at --dsn in every form it can take on a command line, and stays short.
func TestHolderWritesNoPassword(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"dbio", "tpcc", "--target", "/x"}, "dbio tpcc --target /x"},
		{[]string{"dbio", "tpcc", "--engine", "postgres", "--dsn", "postgres://u:S3cret@h/db", "--users", "1"}, "dbio tpcc --engine postgres --dsn (rest not recorded)"},
		{[]string{"dbio", "tpcc", "--dsn=postgres://u:S3cret@h/db"}, "dbio tpcc --dsn (rest not recorded)"},
		{[]string{"dbio", "ab", "--a", "--buffer-pool 1G --dsn u:S3cret@tcp(h)/", "--", "tpcc"}, "dbio ab --a --dsn (rest not recorded)"},
	}
	for _, tt := range tests {
		h := Holder(tt.args, time.Unix(0, 0))
		if got := strings.Join(h.Command, " "); got != tt.want {
			t.Errorf("Holder(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
	long := make([]string, 100)
	for i := range long {
		long[i] = strings.Repeat("x", 1000)
	}
	if h := Holder(long, time.Now()); len(h.Command) > 25 || len(strings.Join(h.Command, " ")) > 24*210 {
		t.Errorf("a long command line is kept whole: %d arguments", len(h.Command))
	}
}
