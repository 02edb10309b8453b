package suite

import (
	"errors"
	"strings"
	"testing"
)

// TestEmptyUsersIsRefused: users = [] used to fall back to the default
// sequence unseen; an absent key still does.
func TestEmptyUsersIsRefused(t *testing.T) {
	const file = `name = "x"
[targets.a]
path = "/x"
[engines.e]
engine = "sqlite"
[workloads.w]
kind = "tpcc"
warehouses = 1
%USERS%
[[runs]]
workload = "w"
engine = "e"
data = "a"
`
	_, err := Parse("s.toml", []byte(strings.Replace(file, "%USERS%", "users = []", 1)), testEnv(nil))
	var ps *Problems
	if !errors.As(err, &ps) || !strings.Contains(ps.Error(), "line 9: workloads.w.users: is empty") {
		t.Fatalf("users = []: %v", err)
	}
	p, err := Parse("s.toml", []byte(strings.Replace(file, "%USERS%", "", 1)), testEnv(nil))
	if err != nil || len(p.Runs) != 1 || len(p.Runs[0].Users) != 4 {
		t.Fatalf("users left out: %v, %+v", err, p)
	}
}
