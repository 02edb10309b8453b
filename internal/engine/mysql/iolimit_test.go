package mysql

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/iolimit"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// TestServerRunsInsideIOLimitGroup starts a managed server through a real
// block-I/O cgroup and checks that the server, with the PID the instance
// reports, is in it. (The PostgreSQL engine's test also measures the cap.)
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
	g, err := host.Create("mariadbtest-"+strconv.Itoa(os.Getpid()), devices, iolimit.Limits{WriteIOPS: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	var ranAs []uint32
	runAs := func(uid, gid uint32) error {
		ranAs = []uint32{uid, gid}
		return g.AllowUser(uid, gid)
	}
	in := start(t, e, p, engine.Options{Settings: smallRedo, Wrap: g.Wrap, RunAs: runAs})
	pid := in.ServerPID()
	if pids := in.PIDs(); len(pids) != 1 || pids[0] != pid {
		t.Errorf("PIDs = %v, want the server %d alone: the wrapper must exec it", pids, pid)
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil || !strings.Contains(string(b), ":/"+filepath.Base(g.Path)+"\n") {
		t.Errorf("server %d is not in %s (%v):\n%s", pid, g.Path, err, b)
	}
	if comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm")); !strings.HasPrefix(string(comm), "mariadbd") && !strings.HasPrefix(string(comm), "mysqld") {
		t.Errorf("process %d is %q, not the server", pid, comm)
	}
	if len(ranAs) != 2 {
		t.Fatal("RunAs was not called")
	}
	if status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status")); err == nil {
		if want := "Uid:\t" + strconv.Itoa(int(ranAs[0])) + "\t"; !strings.Contains(string(status), want) {
			t.Errorf("RunAs was told uid %d, but the server runs as another user:\n%s", ranAs[0], status)
		}
	}
	// The backup programs run inside the group too, as the server's user
	// (mariadb-backup --backup) and as dbio (--copy-back).
	if haveBackupTool(e) {
		dst := filepath.Join(reachableTarget(t, "backup").Dir, "b")
		if _, err := in.Backup(context.Background(), dst); err != nil {
			t.Errorf("Backup inside the group: %v", err)
		} else if err := in.Restore(context.Background(), dst); err != nil {
			t.Errorf("Restore inside the group: %v", err)
		}
	}
	stop(t, in)
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
}
