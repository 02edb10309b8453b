package memlimit

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"dbio/internal/execx"
	"dbio/internal/testenv"
)

func requireHost(t *testing.T) Host {
	t.Helper()
	h := SystemHost("/sys")
	testenv.Require(t, os.Geteuid() == 0 && h.Available() == nil, "root and memory cgroups", testenv.HowRootAndMemcg)
	return h
}

// A program started through Wrap is in the group with the PID it was
// started with, and reading a file four times the cap through the page
// cache leaves the group's memory, cache included, under the cap: the
// page cache is what the cap takes away.
func TestWrappedProgramIsCappedPageCacheIncluded(t *testing.T) {
	h := requireHost(t)
	const limit = 32 << 20
	g, err := h.Create("test-"+t.Name(), limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })

	// The program writes a file of 4x the cap and reads it back: both
	// fill the page cache, charged to the group.
	file := filepath.Join(t.TempDir(), "big")
	// It reports its PID first, and waits for a line on its input at the
	// end, so that the test sees it in the group while it lives.
	script := `echo $$; dd if=/dev/zero of="$0" bs=1M count="$1" status=none && cat "$0" > /dev/null; echo read; read x || true`
	cmd := g.Wrap(execx.Cmd{Name: "/bin/sh", Args: []string{"-c", script, file, strconv.Itoa(4 * limit >> 20)}})
	c := exec.Command(cmd.Name, cmd.Args...)
	in, _ := c.StdinPipe()
	out, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	defer in.Close()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatal("the program printed nothing")
	}
	if pid, _ := strconv.Atoi(lines.Text()); pid != c.Process.Pid {
		t.Errorf("the program runs as pid %s, not the pid %d it was started with: the wrapper must exec it", lines.Text(), c.Process.Pid)
	}
	members, err := g.Members()
	if err != nil {
		t.Fatal(err)
	}
	if !contains(members, c.Process.Pid) {
		t.Errorf("pid %d is not among the group's processes %v", c.Process.Pid, members)
	}
	if !lines.Scan() || lines.Text() != "read" {
		t.Fatalf("the program did not read the file: %q", lines.Text())
	}
	u, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after writing and reading %d MB through a %d MB cap: current %d MB, peak %d MB, cache %d MB", 4*limit>>20, limit>>20, u.Current>>20, u.Peak>>20, u.Cache>>20)
	if !u.Within(limit) {
		t.Errorf("the group holds %d bytes (peak %d), over its cap of %d", u.Current, u.Peak, limit)
	}
	if u.Cache == 0 {
		t.Errorf("no page cache charged to the group after it wrote and read %d MB: the cap would not count the cache", 4*limit>>20)
	}
	if u.Peak < limit/2 {
		t.Errorf("peak %d bytes: writing and reading 4x the cap should have filled the group to it", u.Peak)
	}
	in.Close()
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Path); !os.IsNotExist(err) {
		t.Errorf("cgroup %s left behind", g.Path)
	}
}

func TestCreateRefusesWithoutHierarchy(t *testing.T) {
	_, err := SystemHost(t.TempDir()).Create("x", 1<<30)
	if err == nil || !strings.Contains(err.Error(), "memory cgroup") {
		t.Errorf("Create on a host without memory cgroups: %v", err)
	}
	if _, err := (Host{}).Create("x", 1<<30); err == nil {
		t.Error("Create without a root succeeded")
	}
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
