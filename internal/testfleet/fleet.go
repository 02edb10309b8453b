package testfleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

// The ports a host's daemons listen on. Each host has its own network stack,
// so every host uses the programs' usual ports.
const (
	SSHPort          = 22
	FioPort          = 8765
	NodeExporterPort = 9100
)

const (
	// startTimeout bounds building a fleet and waiting for its daemons.
	startTimeout = 2 * time.Minute
	// stopTimeout bounds a teardown.
	stopTimeout = time.Minute
)

// Fleet is a set of hosts on this machine, each a network namespace joined to
// the root namespace by a bridge, running its own sshd, fio server and node
// exporter.
type Fleet struct {
	// ID is six hex digits that name the fleet's namespaces
	// (dbio-th<pid>-<ID>-h<n>), bridge (dbth-<ID>) and veths (dbth-<ID>-<n>).
	ID string
	// Subnet is the fleet's /24: .1 is the root namespace's, .2 on the hosts'.
	Subnet netip.Prefix
	// Gateway is the root namespace's address on the fleet's bridge: where the
	// hosts reach the test process (a coordinator, a database it runs).
	Gateway netip.Addr
	// Dir is the fleet's directory under the test's temporary directory.
	Dir string
	// SSHConfig is an ssh_config in which every host's Name is a Host entry,
	// with the fleet's identity and known_hosts, as root, never prompting:
	// ssh -F SSHConfig h1 true.
	SSHConfig string
	// KnownHosts holds every host's key under its address.
	KnownHosts string
	// IdentityFile is the private key every host's root account accepts.
	IdentityFile string
	// Hosts are the fleet's hosts, h1 first.
	Hosts []Host

	tools    tools
	daemons  []*daemon
	closed   bool
	closeErr error
}

// Host is one host of a fleet.
type Host struct {
	// Name is h1, h2...: the host's alias in the fleet's SSHConfig and the
	// hostname its daemons and SSH sessions see.
	Name string
	// Namespace is the host's network namespace.
	Namespace string
	// Addr is the host's address, inside its namespace.
	Addr netip.Addr
	// SSHDestination is root@Addr, for ssh -F SSHConfig.
	SSHDestination string
	// SSHConfig is the fleet's ssh_config.
	SSHConfig string
	// FioServer is the host's fio server as fio's --client takes it
	// (ip:<addr>,<port>). The server runs in Storage, so a job file's relative
	// file names land in this host's storage.
	FioServer string
	// NodeExporterURL is the host's node exporter's metrics page.
	NodeExporterURL string
	// Storage is a directory that serves as the host's storage. Hosts share this
	// machine's file system: it is a directory of the test's temporary one.
	Storage string
	// Home is $HOME in the host's SSH sessions (root's own home, and its
	// dotfiles, stay out of them).
	Home string

	ip, ssh string
}

// Command returns a command that runs name inside h's network namespace (as
// ip netns exec does), for what a test does on a host without SSH. Processes
// it leaves in the namespace are killed at teardown.
func (h Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, h.ip, append([]string{"netns", "exec", h.Namespace, name}, args...)...)
}

// SSH returns the ssh command that runs remote on h as root through the
// fleet's ssh_config.
func (h Host) SSH(ctx context.Context, remote ...string) *exec.Cmd {
	return exec.CommandContext(ctx, h.ssh, append([]string{"-F", h.SSHConfig, h.Name}, remote...)...)
}

// Start builds a fleet of n hosts for the test and tears it down in
// t.Cleanup, also when the test fails or panics. It skips the test (fails it
// when CI=true) when this machine lacks root or a program, and fails it when
// the fleet cannot be built.
func Start(t testing.TB, n int) *Fleet {
	t.Helper()
	tl := requireTools(t)
	if n < 1 || n > maxHosts {
		t.Fatalf("testfleet: %d hosts: a fleet has 1 to %d", n, maxHosts)
	}
	id, err := newID()
	if err != nil {
		t.Fatalf("testfleet: %v", err)
	}
	// The directory first: its removal is a cleanup too, and cleanups run last
	// registered first, so the daemons are dead before their files go.
	f := &Fleet{ID: id, Dir: t.TempDir(), tools: tl}
	t.Cleanup(func() {
		if t.Failed() {
			f.logDaemons(t)
		}
		if f.closed {
			return // the test tore it down itself and saw the result
		}
		began := time.Now()
		if err := f.Close(); err != nil {
			t.Errorf("testfleet: %v", err)
		}
		t.Logf("testfleet: torn down in %s", time.Since(began).Round(time.Millisecond))
	})
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := f.build(ctx, t, n); err != nil {
		t.Fatalf("testfleet: %v", err)
	}
	return f
}

func newID() (string, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("choosing a fleet id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// build makes the network, the SSH keys and configuration, and starts and
// waits for every host's daemons; the test log gets how long each took.
func (f *Fleet) build(ctx context.Context, t testing.TB, n int) error {
	began := time.Now()
	if err := f.buildNetwork(ctx, t, n); err != nil {
		return err
	}
	network := time.Since(began)
	if err := f.writeSSHFiles(ctx); err != nil {
		return err
	}
	keys := time.Since(began) - network
	if err := f.startDaemons(ctx); err != nil {
		return err
	}
	total := time.Since(began)
	t.Logf("testfleet: %d hosts on %s in %s (network %s, SSH keys %s, daemons ready %s)", n, f.Subnet,
		total.Round(time.Millisecond), network.Round(time.Millisecond), keys.Round(time.Millisecond), (total - network - keys).Round(time.Millisecond))
	return nil
}

// buildNetwork sweeps what dead test processes left, takes a free /24, and
// makes the bridge, the namespaces and a veth per host, all under the
// network lock.
func (f *Fleet) buildNetwork(ctx context.Context, t testing.TB, n int) error {
	ip := ipTool(f.tools.ip)
	unlock, err := lockNetwork()
	if err != nil {
		return err
	}
	defer unlock()
	swept, err := sweepLocked(ctx, ip)
	if err != nil {
		return fmt.Errorf("sweeping earlier fleets: %w", err)
	}
	if len(swept) > 0 {
		t.Logf("testfleet: removed fleets left by dead test processes: %s", strings.Join(swept, ", "))
	}
	if f.Subnet, err = freeSubnet(ctx, ip); err != nil {
		return err
	}
	f.Gateway = f.Subnet.Addr().Next()
	bridge := fmt.Sprintf(bridgeFormat, f.ID)
	root := []string{
		"link add " + bridge + " type bridge",
		fmt.Sprintf("addr add %s/%d dev %s", f.Gateway, f.Subnet.Bits(), bridge),
		"link set " + bridge + " up",
	}
	addr := f.Gateway
	for i := 1; i <= n; i++ {
		addr = addr.Next()
		h := Host{
			Name:      fmt.Sprintf("h%d", i),
			Namespace: fmt.Sprintf(namespaceFormat, os.Getpid(), f.ID, i),
			Addr:      addr,
			SSHConfig: filepath.Join(f.Dir, "ssh", "ssh_config"),
			Storage:   filepath.Join(f.Dir, fmt.Sprintf("h%d", i), "storage"),
			Home:      filepath.Join(f.Dir, fmt.Sprintf("h%d", i), "home"),
			ip:        f.tools.ip,
			ssh:       f.tools.ssh,
		}
		h.SSHDestination = "root@" + addr.String()
		h.FioServer = fmt.Sprintf("ip:%s,%d", addr, FioPort)
		h.NodeExporterURL = fmt.Sprintf("http://%s/metrics", netip.AddrPortFrom(addr, NodeExporterPort))
		for _, dir := range []string{h.Storage, h.Home} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		f.Hosts = append(f.Hosts, h)
		veth := fmt.Sprintf("%s-%d", bridge, i)
		root = append(root,
			"netns add "+h.Namespace,
			fmt.Sprintf("link add %s type veth peer name %s netns %s", veth, hostInterface, h.Namespace),
			fmt.Sprintf("link set %s master %s up", veth, bridge),
		)
	}
	if err := ip.batch(ctx, "", false, root); err != nil {
		return fmt.Errorf("building the fleet's network: %w", err)
	}
	for _, h := range f.Hosts {
		inside := []string{
			"link set lo up",
			fmt.Sprintf("addr add %s/%d dev %s", h.Addr, f.Subnet.Bits(), hostInterface),
			"link set " + hostInterface + " up",
		}
		if err := ip.batch(ctx, h.Namespace, false, inside); err != nil {
			return fmt.Errorf("configuring %s: %w", h.Name, err)
		}
	}
	return nil
}

// Close tears the fleet down: it kills every process in the hosts'
// namespaces, deletes the veths, the bridge and the namespaces, and checks
// that none of them and none of the daemons is left. Start registers it with
// t.Cleanup; a test calls it itself to tear down early. Later calls return
// the first one's result.
func (f *Fleet) Close() error {
	if f.closed {
		return f.closeErr
	}
	f.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	var errs []error
	if err := removeFleet(ctx, ipTool(f.tools.ip), f.ID); err != nil {
		errs = append(errs, err)
	}
	// Every daemon was in a namespace and is dead, unless listing a namespace's
	// processes failed: then the daemons at least go. Reaping one ends its wait.
	for _, d := range f.daemons {
		if d == nil {
			continue
		}
		d.cmd.Process.Kill() // an error says it is already gone
		select {
		case <-d.done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("%s (pid %d) still running after teardown", d.name, d.cmd.Process.Pid))
		}
	}
	f.closeErr = errors.Join(errs...)
	return f.closeErr
}

// startDaemons starts every host's sshd, fio server and node exporter at
// once, and waits until each accepts connections.
func (f *Fleet) startDaemons(ctx context.Context) error {
	if err := ensurePrivsepDir(); err != nil {
		return err
	}
	f.daemons = make([]*daemon, 3*len(f.Hosts))
	g, gctx := errgroup.WithContext(ctx)
	for i, h := range f.Hosts {
		dir := filepath.Dir(h.Storage)
		specs := []daemonSpec{
			{what: "sshd", port: SSHPort, dir: dir,
				argv: []string{f.tools.sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config")}},
			{what: "fio", port: FioPort, dir: h.Storage,
				argv: []string{f.tools.fio, "--server=" + h.FioServer}},
			{what: "node-exporter", port: NodeExporterPort, dir: dir,
				argv: nodeExporterArgs(f.tools.nodeExporter, netip.AddrPortFrom(h.Addr, NodeExporterPort))},
		}
		for j, spec := range specs {
			slot := &f.daemons[3*i+j]
			g.Go(func() error {
				d, err := f.startDaemon(gctx, h, spec)
				*slot = d
				if err != nil {
					return err
				}
				return d.waitListening(gctx, netip.AddrPortFrom(h.Addr, uint16(spec.port)))
			})
		}
	}
	return g.Wait()
}

// nodeExporterArgs runs the node exporter on listen with the collectors
// that read this machine's /proc and /sys and work the same inside a network
// namespace: CPU, memory, disks, file systems, load, pressure, the
// namespace's own network interfaces, and uname (whose nodename is the host's
// name). The others are off: they read hardware, systemd or D-Bus, which a
// test host has no use for.
func nodeExporterArgs(program string, listen netip.AddrPort) []string {
	return []string{
		program, "--web.listen-address=" + listen.String(),
		"--collector.disable-defaults",
		"--collector.cpu", "--collector.stat", "--collector.loadavg", "--collector.meminfo",
		"--collector.vmstat", "--collector.diskstats", "--collector.filesystem",
		"--collector.pressure", "--collector.netdev", "--collector.uname", "--collector.time",
	}
}

// ensurePrivsepDir makes the directory sshd needs for privilege separation,
// which Debian's service would have made at its start (the tests never start
// the service).
func ensurePrivsepDir() error {
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return fmt.Errorf("making sshd's privilege separation directory: %w", err)
	}
	return nil
}
