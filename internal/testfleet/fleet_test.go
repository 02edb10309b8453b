package testfleet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

func TestFleetOfThreeHosts(t *testing.T) {
	began := time.Now()
	f := Start(t, 3)
	t.Logf("setup of %d hosts: %s", len(f.Hosts), time.Since(began).Round(time.Millisecond))
	ctx := t.Context()

	t.Run("ssh", func(t *testing.T) { checkSSH(t, ctx, f) })
	t.Run("fio client/server on two hosts", func(t *testing.T) { checkFio(t, ctx, f) })
	t.Run("node exporter", func(t *testing.T) { checkNodeExporter(t, ctx, f) })
	t.Run("hosts reach each other", func(t *testing.T) { checkMesh(t, ctx, f) })

	var pids []int
	for _, d := range f.daemons {
		pids = append(pids, d.cmd.Process.Pid)
	}
	began = time.Now()
	if err := f.Close(); err != nil {
		t.Fatalf("teardown: %v", err)
	}
	t.Logf("teardown of %d hosts: %s", len(f.Hosts), time.Since(began).Round(time.Millisecond))
	checkNothingLeft(t, f.tools.ip, f.ID)
	for _, pid := range pids {
		if _, running, err := processStart(pid); err == nil && running {
			t.Errorf("daemon pid %d still runs after teardown", pid)
		}
	}
}

// checkSSH runs a command on every host at once, through the host's alias and
// through its destination, and checks it ran on that host, as root, with the
// host's storage at hand.
func checkSSH(t *testing.T, ctx context.Context, f *Fleet) {
	var g errgroup.Group
	for _, h := range f.Hosts {
		g.Go(func() error {
			marker := filepath.Join(h.Storage, "written-over-ssh")
			out, err := h.SSH(ctx, fmt.Sprintf(`hostname && id -u && echo "$HOME" && echo "$SSH_CONNECTION" && echo %s > %s`, h.Name, marker)).Output()
			if err != nil {
				return fmt.Errorf("ssh %s: %w (%s)", h.Name, err, exitStderr(err))
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) < 4 {
				return fmt.Errorf("ssh %s printed %q", h.Name, out)
			}
			conn := strings.Fields(lines[len(lines)-1]) // client addr, port, server addr, port
			if got := lines[len(lines)-4]; got != h.Name {
				return fmt.Errorf("ssh %s: hostname %q", h.Name, got)
			}
			if got := lines[len(lines)-3]; got != "0" {
				return fmt.Errorf("ssh %s: uid %s, want root", h.Name, got)
			}
			if got := lines[len(lines)-2]; got != h.Home {
				return fmt.Errorf("ssh %s: HOME %s, want %s", h.Name, got, h.Home)
			}
			if len(conn) != 4 || conn[0] != f.Gateway.String() || conn[2] != h.Addr.String() {
				return fmt.Errorf("ssh %s: connection %q, want from %s to %s", h.Name, lines[len(lines)-1], f.Gateway, h.Addr)
			}
			if b, err := os.ReadFile(marker); err != nil || strings.TrimSpace(string(b)) != h.Name {
				return fmt.Errorf("ssh %s: storage marker %q, %v", h.Name, b, err)
			}
			dest := exec.CommandContext(ctx, f.tools.ssh, "-F", f.SSHConfig, h.SSHDestination, "true")
			if out, err := dest.CombinedOutput(); err != nil {
				return fmt.Errorf("ssh %s: %w: %s", h.SSHDestination, err, out)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Error(err)
	}
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// fioClients is the part of fio's json+ output in client/server mode that
// says who ran what.
type fioClients struct {
	Clients []struct {
		Job      string `json:"jobname"`
		Hostname string `json:"hostname"`
		Error    int    `json:"error"`
		Read     struct {
			Bytes int64 `json:"io_bytes"`
		} `json:"read"`
		Write struct {
			Bytes int64 `json:"io_bytes"`
		} `json:"write"`
	} `json:"client_stats"`
}

// checkFio runs one job file on the fio servers of h1 and h2 with fio's own
// client and checks that each host ran it, in its own storage, and h3 not.
func checkFio(t *testing.T, ctx context.Context, f *Fleet) {
	job := filepath.Join(t.TempDir(), "probe.fio")
	// A relative file name: each server works in its host's storage.
	const spec = "[global]\nioengine=psync\nrw=randrw\nbs=4k\nsize=1m\ntime_based\nruntime=1\n[probe]\nfilename=probe.dat\n"
	if err := os.WriteFile(job, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	h1, h2, h3 := f.Hosts[0], f.Hosts[1], f.Hosts[2]
	// fio gives a job file that directly follows a --client to that client
	// alone, and a client with none the job files at the end of the line that
	// no --client took: an option between the last --client and the job file
	// sends it to both.
	cmd := exec.CommandContext(ctx, f.tools.fio, "--client="+h1.FioServer, "--client="+h2.FioServer, "--output-format=json+", job)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio --client: %v: %s\n%s", err, exitStderr(err), out)
	}
	var got fioClients
	if err := json.Unmarshal(out[bytes.IndexByte(out, '{'):], &got); err != nil {
		t.Fatalf("fio json+: %v\n%s", err, out)
	}
	var hosts []string
	for _, c := range got.Clients {
		if c.Job != "probe" {
			continue // fio's own "All clients" sum
		}
		hosts = append(hosts, c.Hostname)
		if c.Error != 0 || c.Read.Bytes == 0 || c.Write.Bytes == 0 {
			t.Errorf("fio on %s: error %d, read %d bytes, wrote %d", c.Hostname, c.Error, c.Read.Bytes, c.Write.Bytes)
		}
	}
	slices.Sort(hosts)
	want := []string{h1.Addr.String(), h2.Addr.String()}
	slices.Sort(want)
	if !slices.Equal(hosts, want) {
		t.Errorf("fio reported hosts %v, want %v", hosts, want)
	}
	for _, h := range []Host{h1, h2} {
		if _, err := os.Stat(filepath.Join(h.Storage, "probe.dat")); err != nil {
			t.Errorf("fio's file is not in %s's storage: %v", h.Name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(h3.Storage, "probe.dat")); err == nil {
		t.Errorf("fio wrote in %s's storage, which it was not asked to use", h3.Name)
	}
}

// checkNodeExporter scrapes every host's node exporter and checks that it
// reports CPU time and that the host answering is the one asked.
func checkNodeExporter(t *testing.T, ctx context.Context, f *Fleet) {
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	for _, h := range f.Hosts {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.NodeExporterURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("scraping %s: %v", h.Name, err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("scraping %s: %s, %v", h.Name, resp.Status, err)
			continue
		}
		text := string(body)
		if !strings.Contains(text, "\nnode_cpu_seconds_total{") {
			t.Errorf("%s's metrics have no node_cpu_seconds_total", h.Name)
		}
		if !strings.Contains(text, fmt.Sprintf(`nodename="%s"`, h.Name)) {
			t.Errorf("%s's node_uname_info does not name it", h.Name)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "node_scrape_collector_success") && strings.HasSuffix(line, " 0") {
				t.Logf("%s: %s", h.Name, line)
			}
		}
	}
}

// checkMesh connects, from inside every host's namespace, to every other
// host's sshd, fio server and node exporter, and to the root namespace's
// address on the bridge.
func checkMesh(t *testing.T, ctx context.Context, f *Fleet) {
	for _, from := range f.Hosts {
		var targets []string
		for _, to := range f.Hosts {
			if to.Name == from.Name {
				continue
			}
			for _, port := range []int{SSHPort, FioPort, NodeExporterPort} {
				targets = append(targets, netip.AddrPortFrom(to.Addr, uint16(port)).String())
			}
		}
		// bash's /dev/tcp connects and the redirection closes; each line says
		// which connection was made.
		var script strings.Builder
		for _, target := range targets {
			addr, port, _ := net.SplitHostPort(target)
			fmt.Fprintf(&script, "exec 3<>/dev/tcp/%s/%s && exec 3>&- && echo %s\n", addr, port, target)
		}
		out, err := from.Command(ctx, "bash", "-c", script.String()).CombinedOutput()
		if err != nil {
			t.Errorf("from %s: %v: %s", from.Name, err, out)
			continue
		}
		if got := strings.Fields(string(out)); !slices.Equal(got, targets) {
			t.Errorf("from %s reached %v, want %v", from.Name, got, targets)
		}
	}
}

// checkNothingLeft fails the test if a namespace or a link of the fleet with
// id is left.
func checkNothingLeft(t *testing.T, ipPath, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	namespaces, links, err := ipTool(ipPath).fleetNames(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(namespaces)+len(links) > 0 {
		t.Errorf("fleet %s left namespaces %v and links %v", id, namespaces, links)
	}
}

// helperEnv makes TestHelperProcess, run in a child test binary, build a
// one-host fleet, print its id, and then panic or hang until killed.
const helperEnv = "TESTFLEET_HELPER"

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return // only a helper for the tests below
	}
	f := Start(t, 1)
	fmt.Printf("fleet %s\n", f.ID)
	switch mode {
	case "panic":
		panic("the helper panics with its fleet up")
	case "hang":
		io.ReadAll(os.Stdin) // until killed: the parent never closes it
	}
}

// startHelper runs TestHelperProcess in a child test binary and returns it
// once it has printed its fleet's id.
func startHelper(t *testing.T, mode string) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen bytes.Buffer
	lines := bufio.NewScanner(io.TeeReader(stdout, &seen))
	for lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "fleet "); ok {
			go io.Copy(&seen, stdout) // the rest, so the child never blocks writing
			return cmd, id, &seen
		}
	}
	cmd.Wait()
	t.Fatalf("the helper printed no fleet id:\n%s\n%s", seen.String(), stderr.String())
	return nil, "", nil
}

func TestTeardownWhenTestPanics(t *testing.T) {
	tl := requireTools(t)
	cmd, id, out := startHelper(t, "panic")
	if err := cmd.Wait(); err == nil {
		t.Fatalf("the panicking helper succeeded:\n%s", out)
	}
	checkNothingLeft(t, tl.ip, id)
}

func TestSweepRemovesFleetOfKilledProcess(t *testing.T) {
	live := Start(t, 1)
	cmd, id, _ := startHelper(t, "hang")
	// SIGKILL: no cleanup runs in the helper, its fleet stays.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	ctx := t.Context()
	ip := ipTool(live.tools.ip)
	namespaces, links, err := ip.fleetNames(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(namespaces) != 1 || len(links) != 2 {
		t.Fatalf("the killed helper's fleet %s: namespaces %v, links %v; want 1 namespace, a bridge and a veth", id, namespaces, links)
	}

	removed, err := Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(removed, live.ID) {
		t.Errorf("Sweep removed the live fleet %s", live.ID)
	}
	if !slices.Contains(removed, id) {
		// Only another test process's Start, sweeping in between, may have
		// taken it; then it must be gone all the same.
		t.Logf("Sweep removed %v, not %s: checking that it is gone", removed, id)
	}
	checkNothingLeft(t, string(ip), id)
	// The live fleet is whole: its namespace is there and its sshd answers.
	if namespaces, links, err := ip.fleetNames(ctx, live.ID); err != nil || len(namespaces) != 1 || len(links) != 2 {
		t.Errorf("the live fleet after Sweep: namespaces %v, links %v, %v", namespaces, links, err)
	}
	conn, err := net.DialTimeout("tcp", netip.AddrPortFrom(live.Hosts[0].Addr, SSHPort).String(), 5*time.Second)
	if err != nil {
		t.Errorf("the live fleet's sshd after Sweep: %v", err)
	} else {
		conn.Close()
	}
}

func TestFirstFreeSubnet(t *testing.T) {
	p := netip.MustParsePrefix
	tests := []struct {
		name string
		used []netip.Prefix
		want string
	}{
		{"nothing used", nil, "10.213.0.0/24"},
		{"other networks", []netip.Prefix{p("192.0.2.0/24"), p("127.0.0.0/8")}, "10.213.0.0/24"},
		{"a fleet's bridge", []netip.Prefix{p("10.213.0.0/24")}, "10.213.1.0/24"},
		{"a host route inside", []netip.Prefix{p("10.213.0.7/32"), p("10.213.1.0/24")}, "10.213.2.0/24"},
		{"a wider network over the first ones", []netip.Prefix{p("10.213.0.0/23"), p("10.213.2.128/25")}, "10.213.3.0/24"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := firstFreeSubnet(tc.used)
			if err != nil || got.String() != tc.want {
				t.Errorf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
	if _, err := firstFreeSubnet([]netip.Prefix{p("10.0.0.0/8")}); err == nil {
		t.Error("a machine on 10.0.0.0/8 left a subnet free")
	}
}

func TestOwnerAlive(t *testing.T) {
	started, running, err := processStart(os.Getpid())
	if err != nil || !running {
		t.Fatalf("processStart(self): %v, running %v", err, running)
	}
	if d := time.Since(started); d < 0 || d > time.Hour {
		t.Fatalf("this test process started %s ago", d)
	}
	// A process that is gone, and one that exists but started after the
	// namespace (its pid was reused).
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		pid     int
		created time.Time
		want    bool
	}{
		{"the creator runs", os.Getpid(), time.Now(), true},
		{"unknown creation time", os.Getpid(), time.Time{}, true},
		{"the pid was reused", os.Getpid(), started.Add(-time.Hour), false},
		{"the creator is gone", done.Process.Pid, time.Now(), false},
	}
	for _, tc := range tests {
		if got := ownerAlive(tc.pid, tc.created); got != tc.want {
			t.Errorf("%s: ownerAlive = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseDestination(t *testing.T) {
	tests := []struct {
		dst  string
		want string
		ok   bool
	}{
		{"default", "", false},
		{"10.213.4.0/24", "10.213.4.0/24", true},
		{"10.213.4.9/24", "10.213.4.0/24", true},
		{"192.0.2.2", "192.0.2.2/32", true},
		{"fe80::1", "", false},
	}
	for _, tc := range tests {
		got, ok := parseDestination(tc.dst)
		if ok != tc.ok || (ok && got.String() != tc.want) {
			t.Errorf("parseDestination(%q) = %s, %v; want %s, %v", tc.dst, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDaemonsOutliveThreadsThatEnd: a daemon's PR_SET_PDEATHSIG fires when
// the thread that started it ends, not the test process. Code under test
// ends threads (execx starts each program on a locked thread that ends with
// it): a thread that had started a daemon must not be one of them, or the
// daemon dies in the middle of a test. Which thread starts a daemon is the
// scheduler's choice: daemons started on any thread failed this about one
// run in four (and TestSessionOnThreeHosts, its fio server on h3 gone, as
// often).
func TestDaemonsOutliveThreadsThatEnd(t *testing.T) {
	f := Start(t, 1)
	// Goroutines that lock their thread and return end that thread: many
	// at once, held until all run, take every thread the runtime has idle,
	// and end them.
	for range 100 {
		var locked, release sync.WaitGroup
		release.Add(1)
		for range 64 {
			locked.Add(1)
			go func() {
				runtime.LockOSThread()
				locked.Done()
				release.Wait()
			}()
		}
		locked.Wait()
		release.Done()
	}
	for _, d := range f.daemons {
		select {
		case <-d.done:
			t.Errorf("%s ended when threads of the test ended: %v", d.name, d.err)
		case <-time.After(100 * time.Millisecond): // a daemon killed by its death signal is reaped at once
		}
	}
}
