package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/target"
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

// TestPreflightCountsTheDatabaseItReplaces fills a small tmpfs target with
// an earlier database of dbio's own: a fresh run that replaces it fits, and
// the same need with the space held by something else does not.
func TestPreflightCountsTheDatabaseItReplaces(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("this test mounts a tmpfs and needs root")
		}
		t.Skip("this test mounts a tmpfs and needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	tg, err := target.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := tg.Sub("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	fill := func(name string, n int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(sub, name), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fill("dbio_tpcc.db", 48<<20)
	plan := Plan{Setup: Setup{
		Kind: "tpcc", Engine: sqlite.Engine{},
		EngineOptions: engine.Options{Database: "dbio_tpcc", Fresh: true}, DataPath: dir,
		ResultsBase: t.TempDir(), SpaceNeeded: 40 << 20,
	}, Body: Steps{Users: []int{1}, Step: time.Second}}
	if err := Preflight(plan, target.HostFS()); err != nil {
		t.Fatalf("a run replacing dbio's 48 MiB database: %v", err)
	}
	// The same space held by another workload's database is not freed by this run.
	os.Rename(filepath.Join(sub, "dbio_tpcc.db"), filepath.Join(sub, "dbio_sysbench.db"))
	err = Preflight(plan, target.HostFS())
	if !IsBadInput(err) || !strings.Contains(err.Error(), "target "+dir+" has ") || !strings.Contains(err.Error(), "tpcc at this scale needs about 40.0 MiB") {
		t.Fatalf("a run that frees nothing: %v", err)
	}
}
