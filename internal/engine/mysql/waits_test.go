package mysql

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/iolimit"
	"dbio/internal/memlimit"
	"dbio/internal/results"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// dataSyncWaits commits n single-row transactions from 4 sessions, then
// has InnoDB write the table's pages and sync its file (FLUSH TABLES … FOR
// EXPORT), and returns the data file syncs and the milliseconds the server
// waited for them, as Stats reports them, with the data file writes.
func dataSyncWaits(t *testing.T, in *Instance, n int) (syncs, ms, writes float64) {
	t.Helper()
	ctx := context.Background()
	db := in.DB()
	if _, err := db.Exec("DROP TABLE IF EXISTS commits"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE commits (id int PRIMARY KEY, pad varchar(600)) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	before, err := in.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const sessions = 4
	var g errgroup.Group
	for s := range sessions {
		g.Go(func() error {
			for i := range n / sessions {
				if _, err := db.Exec("INSERT INTO commits VALUES (?, REPEAT('x', 500))", s*n+i); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "FLUSH TABLES commits FOR EXPORT"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	after, err := in.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := func(name string) float64 { return after[name] - before[name] }
	syncOps, syncWait := results.DBWaitDataSync.Counters()
	writeOps, _ := results.DBWaitWrite.Counters()
	return d(syncOps), d(syncWait), d(writeOps)
}

// The data file syncs MariaDB waited for are recorded (performance_schema;
// MariaDB 10.8 and later no longer instrument the redo log, whose syncs are
// therefore not), and a cap on the disk's writes shows in them. The disk is
// a loop device of its own; only a ratio is asserted.
func TestDataSyncWaitRisesUnderWriteCap(t *testing.T) {
	host := iolimit.SystemHost(target.HostFS().Sys)
	testenv.Require(t, os.Geteuid() == 0 && (host.V1Blkio != "" || host.V2 != ""), "root and cgroup block-I/O control", testenv.HowRootAndBlkio)
	e := realEngine(t)
	tg, err := target.Create(filepath.Join(smallfs.MountDisk(t, 512<<20), "data"))
	if err != nil {
		t.Fatal(err)
	}
	p := engine.Placement{Data: tg}
	st, err := tg.Storage(target.HostFS())
	if err != nil || len(st.Physical) == 0 {
		t.Fatalf("the loop disk has no block device behind it: %+v %v", st, err)
	}
	var devices []string
	for _, d := range st.Physical {
		devices = append(devices, d.DevNumber)
	}
	const commits = 400
	in := start(t, e, p, engine.Options{Settings: smallRedo})
	freeSyncs, freeMs, freeWrites := dataSyncWaits(t, in, commits)
	stop(t, in)
	if freeSyncs <= 0 || freeMs <= 0 || freeWrites <= 0 {
		t.Fatalf("%d commits and a flush recorded %.0f data file writes and %.0f syncs waiting %.3f ms: the database-seen waits are not recorded",
			commits, freeWrites, freeSyncs, freeMs)
	}
	g, err := host.Create("mariadbwaits-"+strconv.Itoa(os.Getpid()), devices, iolimit.Limits{WriteIOPS: 50})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	in = start(t, e, p, engine.Options{Settings: smallRedo, Wrap: g.Wrap, RunAs: g.AllowUser})
	began := time.Now()
	cappedSyncs, cappedMs, _ := dataSyncWaits(t, in, commits)
	wall := time.Since(began)
	stop(t, in)
	free, capped := freeMs/freeSyncs, cappedMs/max(cappedSyncs, 1)
	t.Logf("mean data file sync wait: %.3f ms (%.0f syncs) uncapped, %.3f ms (%.0f syncs) at 50 write IOPS: %.1fx",
		free, freeSyncs, capped, cappedSyncs, capped/free)
	// The units, from physics rather than from the ratio: at 50 write
	// IOPS a sync that writes anything waits about 20 ms, so a mean under
	// 1 ms is a unit read wrong (performance_schema counts picoseconds,
	// PostgreSQL milliseconds); and no sync waits longer than the whole
	// phase it happened in lasted.
	if capped < 1 || capped > float64(wall.Milliseconds()) {
		t.Errorf("mean data file sync wait %.3f ms at 50 write IOPS over a phase of %s: outside 1 ms to the phase's length, a wrong unit", capped, wall.Round(time.Millisecond))
	}
	if capped < 3*free {
		t.Errorf("the mean data file sync wait rose only from %.3f to %.3f ms under a cap of 50 write IOPS; want at least 3x", free, capped)
	}
}

// A server started in a memory cgroup runs there (MariaDB is one process),
// also after a restore restarted it, and stays under the cap while it
// loads and reads a table larger than the cap. InnoDB reads and writes its
// data files with O_DIRECT, so most of its memory is its buffer pool and
// its own structures; what it still writes through the page cache (the
// redo log, the restored files) is charged to the group too.
func TestServerRunsInsideMemoryGroup(t *testing.T) {
	host := memlimit.SystemHost("/sys")
	testenv.Require(t, os.Geteuid() == 0 && host.Available() == nil, "root and memory cgroups", testenv.HowRootAndMemcg)
	e := realEngine(t)
	p := engine.Placement{Data: reachableTarget(t, "data")}
	const limit = 256 << 20
	o := engine.Options{BufferPool: 32 << 20, Settings: smallRedo}
	if need, explain := e.MemoryNeed(o, 2); need > limit {
		t.Fatalf("the engine says it needs %d bytes (%s), over the test's cap", need, explain)
	}
	g, err := host.Create("mariadbmem-"+t.Name(), limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	o.Wrap, o.RunAs = g.Wrap, g.AllowUser
	in := start(t, e, p, o)
	inside := func(when string) {
		t.Helper()
		members, err := g.Members()
		if err != nil {
			t.Fatal(err)
		}
		for _, pid := range in.PIDs() {
			if !slices.Contains(members, pid) && !server.Ended("/proc", pid) {
				t.Errorf("%s: server process %d is not in %s (members %v)", when, pid, g.Path, members)
			}
		}
	}
	inside("after start")
	ctx := context.Background()
	if haveBackupTool(e) {
		dst := filepath.Join(reachableTarget(t, "backup").Dir, "b")
		before := in.ServerPID()
		if _, err := in.Backup(ctx, dst); err != nil {
			t.Fatalf("Backup: %v", err)
		}
		if err := in.Restore(ctx, dst); err != nil {
			t.Fatalf("Restore: %v", err)
		}
		if in.ServerPID() == before {
			t.Fatalf("the restore did not restart the server (pid %d)", before)
		}
		inside("after the restore restarted the server")
	}
	db := in.DB()
	if _, err := db.Exec("CREATE TABLE big (id int PRIMARY KEY, pad varchar(1100)) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO big SELECT seq, REPEAT('x', 1000) FROM seq_1_to_300000"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM big WHERE pad <> ''").Scan(&n); err != nil {
		t.Fatal(err)
	}
	u, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after loading and reading %d rows of 1 kB under a %d MB cap: the group holds %d MB (peak %d MB), page cache %d MB, own memory %d MB",
		n, limit>>20, u.Current>>20, u.Peak>>20, u.Cache>>20, u.Anon>>20)
	if !u.Within(limit) || u.Peak == 0 {
		t.Errorf("the group holds %d bytes (peak %d); want some, at most its cap of %d", u.Current, u.Peak, limit)
	}
	if u.OOMKills > 0 {
		t.Errorf("the kernel killed %d processes of the group", u.OOMKills)
	}
	inside("after the load")
	stop(t, in)
}
