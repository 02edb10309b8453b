package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"dbio/internal/engine"
	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

func TestWaitsQueryByVersion(t *testing.T) {
	tests := []struct {
		version  int
		io, wal  bool
		want     []string
		contains string
	}{
		{150004, true, true, []string{"db_read_ops", "db_read_wait_ms",
			"db_log_write_ops", "db_log_write_wait_ms", "db_sync_ops", "db_sync_wait_ms"}, "pg_stat_wal"},
		{150004, false, true, []string{"db_log_write_ops", "db_log_write_wait_ms", "db_sync_ops", "db_sync_wait_ms"}, "wal_sync_time"},
		{130000, true, false, []string{"db_read_ops", "db_read_wait_ms"}, "blk_read_time"},
		{160000, true, true, []string{"db_read_ops", "db_read_wait_ms", "db_write_ops", "db_write_wait_ms",
			"db_data_sync_ops", "db_data_sync_wait_ms", "db_log_write_ops", "db_log_write_wait_ms", "db_sync_ops", "db_sync_wait_ms"}, "pg_stat_io"},
		{180000, false, true, []string{"db_log_write_ops", "db_log_write_wait_ms", "db_sync_ops", "db_sync_wait_ms"}, "object = 'wal'"},
		{150004, false, false, nil, ""},
	}
	for _, tt := range tests {
		w := waitsFor(tt.version, tt.io, tt.wal)
		if fmt.Sprint(w.names) != fmt.Sprint(tt.want) {
			t.Errorf("version %d io %v wal %v: names %v, want %v", tt.version, tt.io, tt.wal, w.names, tt.want)
		}
		if tt.contains != "" && !strings.Contains(w.query, tt.contains) {
			t.Errorf("version %d: query %q lacks %q", tt.version, w.query, tt.contains)
		}
	}
}

// commitWaits commits n single-row transactions from 4 sessions of their
// own and returns the WAL syncs and the milliseconds the server waited for
// them meanwhile, as Stats reports them. The sessions end before Stats is
// read: a backend that exits flushes the statistics it still held.
func commitWaits(t *testing.T, in *Instance, n int) (syncs, ms float64) {
	t.Helper()
	ctx := context.Background()
	if _, err := in.DB().Exec("DROP TABLE IF EXISTS commits; CREATE TABLE commits (id int, pad text)"); err != nil {
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
			cfg, err := pgx.ParseConfig(in.DSN())
			if err != nil {
				return err
			}
			cfg.RuntimeParams["application_name"] = "dbio-commit-waits"
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			for i := range n / sessions {
				if _, err := c.Exec(ctx, "INSERT INTO commits VALUES ($1, repeat('x', 500))", s*n+i); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	// Wait for the sessions' backends to end, and with them their statistics to be flushed.
	for {
		var left int
		if err := in.StatsDB().QueryRow("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dbio-commit-waits'").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond) // a backend's exit has no event a client can wait on
	}
	after, err := in.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ops, wait := results.DBWaitSync.Counters()
	return after[ops] - before[ops], after[wait] - before[wait]
}

// The WAL syncs PostgreSQL waited for are recorded, and a cap on the
// disk's writes shows in them: the same commits wait several times longer
// per sync, though the device, whose latency /proc/diskstats reports, never
// sees the delay the cap adds before it. The disk is a loop device of its
// own, so that other programs' I/O on the host's disk does not weigh on
// the uncapped run; only a ratio is asserted.
func TestSyncWaitRisesUnderWriteCap(t *testing.T) {
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
	in := start(t, e, p, engine.Options{})
	freeSyncs, freeMs := commitWaits(t, in, commits)
	stop(t, in)
	if freeSyncs <= 0 || freeMs <= 0 {
		t.Fatalf("%d commits recorded %.0f WAL syncs waiting %.3f ms: the database-seen sync wait is not recorded", commits, freeSyncs, freeMs)
	}

	g, err := host.Create("pgwaits-"+strconv.Itoa(os.Getpid()), devices, iolimit.Limits{WriteIOPS: 50})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	in = start(t, e, p, engine.Options{Wrap: g.Wrap, RunAs: g.AllowUser})
	began := time.Now()
	cappedSyncs, cappedMs := commitWaits(t, in, commits)
	wall := time.Since(began)
	stop(t, in)
	free, capped := freeMs/freeSyncs, cappedMs/max(cappedSyncs, 1)
	t.Logf("mean WAL sync wait over %d commits: %.3f ms (%.0f syncs) uncapped, %.3f ms (%.0f syncs) at 50 write IOPS: %.1fx",
		commits, free, freeSyncs, capped, cappedSyncs, capped/free)
	// The units, from physics rather than from the ratio: at 50 write
	// IOPS a sync that writes anything waits about 20 ms, so a mean under
	// 1 ms is a unit read wrong (performance_schema counts picoseconds,
	// PostgreSQL milliseconds); and no sync waits longer than the whole
	// phase it happened in lasted.
	if capped < 1 || capped > float64(wall.Milliseconds()) {
		t.Errorf("mean WAL sync wait %.3f ms at 50 write IOPS over a phase of %s: outside 1 ms to the phase's length, a wrong unit", capped, wall.Round(time.Millisecond))
	}
	if capped < 3*free {
		t.Errorf("the mean WAL sync wait rose only from %.3f to %.3f ms under a cap of 50 write IOPS; want at least 3x", free, capped)
	}
}
