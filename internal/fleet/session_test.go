package fleet

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
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

// waitNoStrays waits until no process dbio started is left on the hosts.
func waitNoStrays(t *testing.T, f *testfleet.Fleet) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a loaded machine ends ssh sessions slowly
	for {
		strays, err := f.Strays(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(strays) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left on the hosts: %v", strays)
		}
		time.Sleep(50 * time.Millisecond) // polling the hosts' process lists
	}
}

func TestSessionOnThreeHosts(t *testing.T) {
	f := testfleet.Start(t, 3)
	ctx := t.Context()
	shell := Shell{Exec: execx.Real{}}
	hosts := fleetHosts(f, testPort)
	local := localFioVersion(t)

	t.Run("another fio version is refused", func(t *testing.T) {
		_, err := shell.Open(ctx, hosts, "fio-0.1")
		if err == nil || !strings.Contains(err.Error(), "runs "+local+", this machine fio-0.1") {
			t.Fatalf("Open with another version: %v", err)
		}
		waitNoStrays(t, f)
	})

	t.Run("servers started and stopped", func(t *testing.T) {
		sess, err := shell.Open(ctx, hosts, local)
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
		waitNoStrays(t, f)
	})

	t.Run("a server the user runs", func(t *testing.T) {
		running := fleetHosts(f, testfleet.FioPort)
		for i := range running {
			running[i].FioServer = ServerRunning
		}
		sess, err := shell.Open(ctx, running, local)
		if err != nil {
			t.Fatal(err)
		}
		if sess.Servers[0].Started {
			t.Error("dbio says it started a server the user runs")
		}
		sess.Close()
		// The fleet's own servers still answer.
		if _, err := shell.Open(ctx, running[:1], local); err != nil {
			t.Errorf("the user's server after Close: %v", err)
		}
	})

	t.Run("unreachable host", func(t *testing.T) {
		bad := append([]Host(nil), hosts...)
		bad[1].Destination = "nosuchalias"
		_, err := shell.Open(ctx, bad, local)
		if err == nil || !strings.Contains(err.Error(), "host h2") {
			t.Fatalf("Open with an unreachable host: %v", err)
		}
		waitNoStrays(t, f)
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
