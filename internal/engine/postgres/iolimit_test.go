package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/iolimit"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// heavyWrite creates a table of about 6 MB and checkpoints it: the WAL is
// synced at commit and the table's pages at the checkpoint, both by server
// processes, so a cap on the server's writes must slow it down.
func heavyWrite(t *testing.T, in *Instance) time.Duration {
	t.Helper()
	db := in.DB()
	if _, err := db.Exec("DROP TABLE IF EXISTS heavy; CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if _, err := db.Exec("CREATE TABLE heavy AS SELECT g AS id, repeat('x', 200) AS pad FROM generate_series(1, 25000) g"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	return time.Since(began)
}

// TestServerRunsInsideIOLimitGroup starts a managed server through a real
// block-I/O cgroup and checks that the postmaster and all its children are
// in it and that a write-heavy statement is slowed by the cap. Only a lower
// bound is asserted: a busy machine makes a run slower, never faster.
func TestServerRunsInsideIOLimitGroup(t *testing.T) {
	host := iolimit.SystemHost(target.HostFS().Sys)
	testenv.Require(t, os.Geteuid() == 0 && (host.V1Blkio != "" || host.V2 != ""), "root and cgroup block-I/O control", testenv.HowRootAndBlkio)
	e := realEngine(t)
	p := engine.Placement{Data: reachableTarget(t, "data")}
	st, err := p.Data.Storage(target.HostFS())
	testenv.Require(t, err == nil && len(st.Physical) > 0, "a temporary directory on a block device", testenv.HowBlockDeviceTemp)
	var devices []string
	for _, d := range st.Physical {
		devices = append(devices, d.DevNumber)
	}

	in := start(t, e, p, engine.Options{})
	free := heavyWrite(t, in)
	stop(t, in)

	const wbps = 5 << 20
	g, err := host.Create("pgtest-"+strconv.Itoa(os.Getpid()), devices, iolimit.Limits{WriteIOPS: 50, WriteBPS: wbps})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	in = start(t, e, p, engine.Options{Wrap: g.Wrap, RunAs: g.AllowUser})
	pids := in.PIDs()
	if pids[0] != in.ServerPID() {
		t.Fatalf("PIDs = %v: the wrapper did not keep the server's PID %d", pids, in.ServerPID())
	}
	for _, pid := range pids {
		// A child that exits since PIDs listed it (PostgreSQL's startup
		// process, an autovacuum worker) leaves its groups for the root ones
		// early in its exit, before it shows as ended: only a process still
		// running after that must be in the group, so one seen outside it
		// is given a few seconds to end.
		var b []byte
		deadline := time.Now().Add(5 * time.Second)
		poll := time.NewTicker(20 * time.Millisecond)
		for {
			var err error
			b, err = os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
			if err != nil || strings.Contains(string(b), ":/"+filepath.Base(g.Path)+"\n") || server.Ended("/proc", pid) {
				b = nil
				break
			}
			if time.Now().After(deadline) {
				break
			}
			<-poll.C
		}
		poll.Stop()
		if b != nil {
			t.Errorf("server process %d is not in %s:\n%s", pid, g.Path, b)
		}
	}
	capped := heavyWrite(t, in)
	t.Logf("6 MB table and checkpoint: %s unlimited, %s capped at 50 write IOPS and 5 MB/s", free.Round(time.Millisecond), capped.Round(time.Millisecond))
	// The table (about 6 MB) passes the 5 MB/s cap once at the checkpoint
	// and its WAL a second time: over two seconds. Half of that is asserted,
	// leaving room for the throttle's first slice.
	if capped < time.Second {
		t.Errorf("the capped run took %s; 12 MB at 5 MB/s cannot take less than a second", capped)
	}
	// The backup programs run inside the group too.
	if _, err := in.BackupLogical(context.Background(), filepath.Join(t.TempDir(), "dump")); err != nil {
		t.Errorf("BackupLogical inside the group: %v", err)
	}
	stop(t, in)
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Path); !os.IsNotExist(err) {
		t.Errorf("cgroup %s left behind", g.Path)
	}
}
