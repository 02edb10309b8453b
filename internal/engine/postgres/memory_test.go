package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
	"dbio/internal/memlimit"
	"dbio/internal/testenv"
)

// inGroup fails t for each running server process outside the group.
func inGroup(t *testing.T, in *Instance, g *memlimit.Group, when string) {
	t.Helper()
	members, err := g.Members()
	if err != nil {
		t.Fatal(err)
	}
	pids := in.PIDs()
	if len(pids) < 2 {
		t.Fatalf("%s: the server has processes %v; want the postmaster and its children", when, pids)
	}
	for _, pid := range pids {
		// A child that exits meanwhile leaves the group; only running ones must be in it.
		if !slices.Contains(members, pid) && !server.Ended("/proc", pid) {
			t.Errorf("%s: server process %d is not in %s (members %v)", when, pid, g.Path, members)
		}
	}
}

// A server started in a memory cgroup runs there with every process it
// forks, also after a restore restarts it, and reading a table larger than
// the cap leaves the group at or under it: the page cache PostgreSQL reads
// through is capped with the rest, which is what makes a small machine's
// reads go to the disk.
func TestServerMemoryCapHoldsPageCache(t *testing.T) {
	host := memlimit.SystemHost("/sys")
	testenv.Require(t, os.Geteuid() == 0 && host.Available() == nil, "root and memory cgroups", testenv.HowRootAndMemcg)
	e := realEngine(t)
	p := engine.Placement{Data: reachableTarget(t, "data")}
	const limit = 160 << 20
	o := engine.Options{BufferPool: 16 << 20}
	if need, explain := e.MemoryNeed(o, 2); need > limit {
		t.Fatalf("the engine says it needs %d bytes (%s), over the test's cap", need, explain)
	}
	g, err := host.Create("pgmem-"+t.Name(), limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	o.Wrap, o.RunAs = g.Wrap, g.AllowUser
	in := start(t, e, p, o)
	inGroup(t, in, g, "after start")

	ctx := context.Background()
	backup := filepath.Join(reachableTarget(t, "backup").Dir, "b")
	if _, err := in.Backup(ctx, backup); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	before := in.ServerPID()
	if err := in.Restore(ctx, backup); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if in.ServerPID() == before {
		t.Fatalf("the restore did not restart the server (pid %d)", before)
	}
	inGroup(t, in, g, "after the restore restarted the server")

	// About 2.5 times the cap, written and then read in full.
	if _, err := in.DB().Exec("CREATE TABLE big AS SELECT g AS id, repeat('x', 1000) AS pad FROM generate_series(1, 350000) g"); err != nil {
		t.Fatal(err)
	}
	var size int64
	if err := in.DB().QueryRow("SELECT pg_relation_size('big')").Scan(&size); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var n int64
		if err := in.DB().QueryRow("SELECT count(*) FROM big WHERE pad <> ''").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	u, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a %d MB table read twice under a %d MB cap: the group holds %d MB (peak %d MB), page cache %d MB, own memory %d MB; %d refaults, %d cap hits, %d major faults",
		size>>20, limit>>20, u.Current>>20, u.Peak>>20, u.Cache>>20, u.Anon>>20, u.Refaults, u.LimitHits, u.MajorFaults)
	if size < 2*limit {
		t.Fatalf("the table is %d bytes, not larger than twice the cap: the test proves nothing", size)
	}
	if !u.Within(limit) {
		t.Errorf("the group holds %d bytes (peak %d), over its cap of %d", u.Current, u.Peak, limit)
	}
	if u.Cache == 0 {
		t.Error("no page cache is charged to the server's group: the cap would leave the OS cache free")
	}
	if u.Peak < limit*3/4 {
		t.Errorf("peak %d bytes: reading %d bytes should have filled the group to its cap of %d", u.Peak, size, limit)
	}
	// The second read finds evicted what the first brought in: the cap binds.
	if u.Refaults == 0 {
		t.Errorf("no refault counted after reading a %d MB table twice under a %d MB cap", size>>20, limit>>20)
	}
	if u.OOMKills > 0 {
		t.Errorf("the kernel killed %d processes of the group", u.OOMKills)
	}
	inGroup(t, in, g, "after the reads")
	stop(t, in)
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Path); !os.IsNotExist(err) {
		t.Error(fmt.Sprintf("cgroup %s left behind", g.Path))
	}
}

// shared_buffers counts as PostgreSQL reads it: with a unit, or as 8 kB
// blocks when it is a bare number.
func TestMemoryNeedReadsSharedBuffers(t *testing.T) {
	// The shared part of an engine counts the memory its New describes.
	e := New("postgres", execx.Real{}, "/proc")
	base, _ := e.MemoryNeed(engine.Options{BufferPool: 256 << 20}, 0)
	for _, c := range []struct {
		setting string
		pool    int64
	}{
		{"256MB", 256 << 20},
		{"32768", 32768 * 8 << 10}, // 256 MB in blocks
		{"1GB", 1 << 30},
	} {
		need, what := e.MemoryNeed(engine.Options{Settings: map[string]string{"shared_buffers": c.setting}}, 0)
		wal := min(c.pool/32, 16<<20)
		if want := base - (256 << 20) - min(int64(256<<20)/32, 16<<20) + c.pool + wal; need != want {
			t.Errorf("shared_buffers=%s: need %d (%s), want %d", c.setting, need, what, want)
		}
	}
}

// Under a memory cap the server's index builds sort within a quarter of
// what the cap leaves, which memory.toml's 200 MB server with 64 MB of
// shared buffers needs (two 256 MB sorts at once overran it); a cap with
// room for the load's own 256 MB, or none, leaves the setting alone.
func TestCapSortSetting(t *testing.T) {
	e := New("postgres", execx.Real{Proc: "/proc"}, "/proc")
	for _, tc := range []struct {
		name   string
		o      engine.Options
		want   string
		absent bool
	}{
		// 200 MB - (64 MB + 2 MB of WAL buffers + 32 MB + 4 × 4 MB) = 86 MB; a quarter.
		{"200 MB server, 64 MB pool", engine.Options{ServerMemory: 200 << 20, BufferPool: 64 << 20}, "22016kB", false},
		{"2 GB server", engine.Options{ServerMemory: 2 << 30, BufferPool: 64 << 20}, "", true},
		{"no cap", engine.Options{BufferPool: 64 << 20}, "", true},
		{"a cap the pool fills", engine.Options{ServerMemory: 100 << 20, BufferPool: 96 << 20}, "1MB", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := capSortSetting(e, tc.o)
			if tc.absent {
				if len(s) != 0 {
					t.Errorf("%+v, want none", s)
				}
				return
			}
			if len(s) != 1 || s[0].Name != "maintenance_work_mem" || s[0].Value != tc.want {
				t.Errorf("%+v, want maintenance_work_mem = %s", s, tc.want)
			}
		})
	}
}
