package fleet

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/target"
	"dbio/internal/testfleet"
)

// testPort is where the servers dbio starts listen in these tests: the
// fleet's own fio servers hold fio's default port.
const testPort = 8766

func fleetHosts(f *testfleet.Fleet, port int) []Host {
	var hosts []Host
	for _, h := range f.Hosts {
		hosts = append(hosts, Host{Name: h.Name, Destination: h.Name, SSHConfig: f.SSHConfig, WorkDir: h.Storage, FioPort: port})
	}
	return hosts
}

func localFioVersion(t *testing.T) string {
	out, err := exec.Command("fio", "--version").Output()
	if err != nil {
		t.Fatalf("fio --version: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestSessionOnThreeHosts(t *testing.T) {
	f := testfleet.Start(t, 3)
	ctx := t.Context()
	shell := Shell{Exec: execx.Real{}}
	hosts := fleetHosts(f, testPort)
	local := localFioVersion(t)

	t.Run("another fio version is refused", func(t *testing.T) {
		_, err := shell.OpenServers(ctx, hosts, "fio-0.1")
		if err == nil || !strings.Contains(err.Error(), "runs "+local+", this machine fio-0.1") {
			t.Fatalf("Open with another version: %v", err)
		}
		f.WaitNoStrays(t)
	})

	t.Run("servers started and stopped", func(t *testing.T) {
		sess, err := shell.OpenServers(ctx, hosts, local)
		if err != nil {
			t.Fatal(err)
		}
		for i, srv := range sess.Servers {
			if want := FioServerArg(f.Hosts[i].Addr.String(), testPort); srv.Arg != want || !srv.Started {
				t.Errorf("server of %s: %s (started %v), want %s started", srv.Host.Name, srv.Arg, srv.Started, want)
			}
			if sess.Versions[srv.Host.Name] != local {
				t.Errorf("version of %s: %q", srv.Host.Name, sess.Versions[srv.Host.Name])
			}
		}
		// The servers run jobs: the fio client reaches every one of them,
		// and each job works in its host's work directory.
		job := filepath.Join(t.TempDir(), "probe.fio")
		os.WriteFile(job, []byte("[probe]\nfilename=probe.dat\nsize=64k\nrw=read\nioengine=psync\n"), 0o644)
		args := []string{"--output-format=json"}
		for _, srv := range sess.Servers {
			args = append(args, "--client="+srv.Arg, job)
		}
		if out, err := exec.CommandContext(ctx, "fio", args...).CombinedOutput(); err != nil {
			t.Fatalf("fio client: %v: %s", err, out)
		}
		for _, h := range f.Hosts {
			if _, err := os.Stat(filepath.Join(h.Storage, "probe.dat")); err != nil {
				t.Errorf("the job did not run in %s's work directory: %v", h.Name, err)
			}
		}
		if err := sess.Close(); err != nil {
			t.Fatal(err)
		}
		f.WaitNoStrays(t)
	})

	t.Run("a server that dies is seen to end at once", func(t *testing.T) {
		// When fio's server dies on its host, its ssh session ends; dbio
		// must see it end within the few seconds a failed point waits for
		// (EndsWithin), not only once exec gives up on ssh's input.
		sess, err := shell.OpenServers(ctx, hosts[:1], local)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		var pids []int
		left, err := f.Strays(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range left {
			if p.Host == "h1" && strings.Contains(p.Command, "fio --server=") {
				pids = append(pids, p.PID)
			}
		}
		if len(pids) == 0 {
			t.Fatalf("no fio server of dbio's on h1: %v", left)
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		killed := time.Now()
		if !sess.Servers[0].EndsWithin(5 * time.Second) {
			t.Errorf("the server's session still runs 5 s after its fio was killed")
		}
		t.Logf("seen to end after %v", time.Since(killed))
		// Nothing of the server's script outlives it, before dbio has
		// closed its input.
		f.WaitNoStrays(t)
		if err := sess.Close(); err != nil {
			t.Fatal(err)
		}
		f.WaitNoStrays(t)
	})

	t.Run("a port another server holds", func(t *testing.T) {
		// The fleet's own fio servers listen at fio's port: a server dbio
		// starts there could not bind, and the other would answer for it.
		taken := fleetHosts(f, testfleet.FioPort)[:1]
		sess, err := shell.OpenServers(ctx, taken, local)
		if err == nil {
			sess.Close()
			t.Fatal("Open started a server on a port another server holds")
		}
		if !strings.Contains(err.Error(), "already listens at") || !strings.Contains(err.Error(), `fio_server = "running"`) {
			t.Errorf("the error says no fix: %v", err)
		}
		f.WaitNoStrays(t)
	})

	t.Run("a server the user runs", func(t *testing.T) {
		running := fleetHosts(f, testfleet.FioPort)
		for i := range running {
			running[i].FioServer = ServerRunning
		}
		sess, err := shell.OpenServers(ctx, running, local)
		if err != nil {
			t.Fatal(err)
		}
		if sess.Servers[0].Started {
			t.Error("dbio says it started a server the user runs")
		}
		sess.Close()
		// The fleet's own servers still answer.
		if _, err := shell.OpenServers(ctx, running[:1], local); err != nil {
			t.Errorf("the user's server after Close: %v", err)
		}
	})

	t.Run("unreachable host", func(t *testing.T) {
		bad := append([]Host(nil), hosts...)
		bad[1].Destination = "nosuchalias"
		sess, err := shell.OpenServers(ctx, bad, local)
		if err != nil {
			t.Fatalf("Open with one unreachable host: %v", err)
		}
		if len(sess.Servers) != 2 || sess.Servers[0].Host.Name != "h1" || sess.Servers[1].Host.Name != "h3" {
			t.Errorf("servers %v, want h1 and h3", sess.Servers)
		}
		// ssh's own words say why.
		if len(sess.Unreached) != 1 || sess.Unreached[0].Host.Name != "h2" || !strings.Contains(sess.Unreached[0].Err.Error(), "nosuchalias") {
			t.Errorf("unreached %+v, want h2 with ssh's error", sess.Unreached)
		}
		if err := sess.Close(); err != nil {
			t.Fatal(err)
		}
		for i := range bad {
			bad[i].Destination = "nosuchalias"
		}
		if _, err := shell.OpenServers(ctx, bad, local); !errors.Is(err, ErrNoHostLeft) {
			t.Errorf("Open with no host reachable: %v", err)
		}
		f.WaitNoStrays(t)
	})

	t.Run("clock", func(t *testing.T) {
		// The hosts share this machine's clock: the time read there lies
		// between the line sent and the answer, so the offset is within half
		// the round trip.
		for _, h := range hosts {
			c, err := shell.Clock(ctx, h, ClockTries, time.Now)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: offset %v, round trip %v", h.Name, c.Offset, c.RoundTrip)
			if c.RoundTrip <= 0 || abs(c.Offset) > c.RoundTrip/2 || c.Tries != ClockTries || c.Off() {
				t.Errorf("%s: %+v", h.Name, c)
			}
		}
		// The sign: the host's clock minus this machine's. This machine's
		// clock read 3 s late makes the host 3 s ahead (positive), read 3 s
		// early makes it 3 s behind (negative); every user of the offset
		// (the fleet's window, the warnings) relies on that.
		for _, skew := range []time.Duration{3 * time.Second, -3 * time.Second} {
			lagging := func() time.Time { return time.Now().Add(-skew) }
			c, err := shell.Clock(ctx, hosts[0], ClockTries, lagging)
			if err != nil {
				t.Fatal(err)
			}
			if d := abs(c.Offset - skew); d > c.RoundTrip/2+time.Millisecond {
				t.Errorf("this machine's clock %v behind the host's: offset %v (round trip %v), want %v", skew, c.Offset, c.RoundTrip, skew)
			}
			if !c.Off() {
				t.Errorf("an offset of %v is not Off", c.Offset)
			}
		}
		bad := hosts[0]
		bad.Destination = "nosuchalias"
		if _, err := shell.Clock(ctx, bad, 1, time.Now); err == nil || !strings.Contains(err.Error(), "nosuchalias") {
			t.Errorf("the clock of an unreachable host: %v", err)
		}
		f.WaitNoStrays(t)
	})

	t.Run("remote target lock", func(t *testing.T) {
		dir := filepath.Join(f.Hosts[1].Storage, "locked", "dbio")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		first, err := shell.LockTarget(ctx, hosts[1], dir, ".dbio-lock", `{"pid":1}`)
		if err != nil {
			t.Fatal(err)
		}
		// A second run, from another host's view of the same files too.
		for _, h := range []Host{hosts[1], hosts[2]} {
			_, err := shell.LockTarget(ctx, h, dir, ".dbio-lock", `{"pid":2}`)
			var busy *BusyTargetError
			if !errors.As(err, &busy) || !errors.Is(err, ErrTargetBusy) || busy.Holder != `{"pid":1}` {
				t.Errorf("a second lock through %s: %v", h.Name, err)
			}
		}
		if err := first.Release(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, ".dbio-lock")); len(b) != 0 {
			t.Errorf("the released lock file still names %q", b)
		}
		again, err := shell.LockTarget(ctx, hosts[2], dir, ".dbio-lock", `{"pid":3}`)
		if err != nil {
			t.Fatalf("the lock after its release: %v", err)
		}
		// A link planted at the path while the lock is held: releasing the
		// lock empties the lock file through its descriptor, never the file
		// the link names.
		victim := filepath.Join(f.Hosts[2].Storage, "victim")
		if err := os.WriteFile(victim, []byte("not dbio's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, ".dbio-lock"))
		if err := os.Symlink(victim, filepath.Join(dir, ".dbio-lock")); err != nil {
			t.Fatal(err)
		}
		if err := again.Release(); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(victim); err != nil || string(b) != "not dbio's\n" {
			t.Errorf("releasing the lock wrote through a link planted at its path: the linked file holds %q (%v)", b, err)
		}
		os.Remove(filepath.Join(dir, ".dbio-lock"))
		// A dangling link: nothing is made where it points.
		if err := os.Symlink(victim+".new", filepath.Join(dir, ".dbio-lock")); err != nil {
			t.Fatal(err)
		}
		if _, err := shell.LockTarget(ctx, hosts[1], dir, ".dbio-lock", `{}`); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("a lock file that is a dangling link: %v", err)
		}
		if _, err := os.Lstat(victim + ".new"); err == nil {
			t.Error("a lock through a dangling link made the file it names")
		}
		os.Remove(filepath.Join(dir, ".dbio-lock"))
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, ".dbio-lock")); err != nil {
			t.Fatal(err)
		}
		if _, err := shell.LockTarget(ctx, hosts[1], dir, ".dbio-lock", `{}`); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("a lock file that is a link: %v", err)
		}
		f.WaitNoStrays(t)
	})

	t.Run("a failed lock closes what it opened", func(t *testing.T) {
		// Each way a lock fails (ssh cannot reach the host, the lock file
		// is a link, another run holds it) leaves no descriptor behind: a
		// run that retries, or a long suite, would otherwise run out.
		dir := filepath.Join(f.Hosts[0].Storage, "fdcheck", "dbio")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		held, err := shell.LockTarget(ctx, hosts[0], dir, ".dbio-lock", `{"pid":1}`)
		if err != nil {
			t.Fatal(err)
		}
		linked := filepath.Join(f.Hosts[0].Storage, "fdlink", "dbio")
		if err := os.MkdirAll(linked, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/etc/passwd", filepath.Join(linked, ".dbio-lock")); err != nil {
			t.Fatal(err)
		}
		unreachable := hosts[0]
		unreachable.Destination = "nosuchalias"
		for _, c := range []struct {
			name string
			h    Host
			dir  string
		}{{"unreachable", unreachable, dir}, {"a link", hosts[0], linked}, {"busy", hosts[1], dir}} {
			before := openDescriptors(t)
			for range 3 {
				_, err := shell.LockTarget(ctx, c.h, c.dir, ".dbio-lock", `{}`)
				if err == nil {
					t.Fatalf("%s: the lock was taken", c.name)
				}
				if c.name == "unreachable" && !strings.Contains(err.Error(), "ssh -o BatchMode=yes nosuchalias true") {
					t.Errorf("the lock on an unreachable host says no fix: %v", err)
				}
				// A host lost at its lock is left out as unreachable, as at
				// its other steps, rather than failing the whole run.
				if c.name == "unreachable" && !Unreachable(err) {
					t.Errorf("the lock on an unreachable host is not Unreachable: %v", err)
				}
			}
			if after := openDescriptors(t); after > before {
				t.Errorf("%s: %d descriptors open before three failed locks, %d after", c.name, before, after)
			}
		}
		if err := held.Release(); err != nil {
			t.Fatal(err)
		}
		f.WaitNoStrays(t)
	})

	t.Run("devices behind a target", func(t *testing.T) {
		// The hosts share this machine's disks: the devices found over ssh
		// are those dbio finds behind a local target.
		st, err := target.HostFS().Resolve(f.Hosts[0].Storage)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, d := range st.Physical {
			want = append(want, d.Name)
		}
		got, err := shell.TargetDevices(ctx, hosts[0], f.Hosts[0].Storage)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("TargetDevices = %v, %v; want %v", got, err, want)
		}
		if got, err := shell.TargetDevices(ctx, hosts[0], "/dev/shm"); err != nil || len(got) != 0 {
			t.Errorf("TargetDevices on tmpfs = %v, %v; want none", got, err)
		}
	})

	t.Run("remote target", func(t *testing.T) {
		h := hosts[0]
		dir := filepath.Join(f.Hosts[0].Storage, "data")
		if _, err := shell.PrepareTarget(ctx, h, dir, "dbio", ".dbio-owned", "fio"); err == nil {
			t.Error("a missing target was accepted")
		}
		os.Mkdir(dir, 0o755)
		work, err := shell.PrepareTarget(ctx, h, dir, "dbio", ".dbio-owned", "fio")
		if err != nil || work != filepath.Join(dir, "dbio", "fio") {
			t.Fatalf("PrepareTarget = %s, %v", work, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "dbio", ".dbio-owned")); err != nil {
			t.Errorf("no marker: %v", err)
		}
		foreign := filepath.Join(f.Hosts[0].Storage, "foreign")
		os.MkdirAll(filepath.Join(foreign, "dbio"), 0o755)
		if _, err := shell.PrepareTarget(ctx, h, foreign, "dbio", ".dbio-owned", "fio"); err == nil || !strings.Contains(err.Error(), "dbio did not make") {
			t.Errorf("a dbio directory dbio did not make: %v", err)
		}
	})
}

// openDescriptors counts this process's open file descriptors.
func openDescriptors(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}
