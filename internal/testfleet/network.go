package testfleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Names of what a fleet creates. Every name carries the fleet's six-hex-digit
// id, so a fleet's own teardown and the sweeper find everything by name alone,
// also what a crashed setup made before it could record anything.
const (
	// namespaceFormat names host n's namespace: the creating process's pid (the
	// sweeper's test for "stale"), the fleet id, the host number.
	namespaceFormat = "dbio-th%d-%s-h%d"
	// bridgeFormat names the fleet's bridge in the root namespace; a host's veth
	// end in the root namespace adds "-<n>" (15 bytes at most, Linux's limit).
	bridgeFormat = "dbth-%s"
	// hostInterface is the host's end of its veth, inside its namespace.
	hostInterface = "eth0"
	// lockPath serializes, across test processes, the choice of a subnet and
	// the building of a fleet's links with the sweeper, which would otherwise
	// take a bridge whose namespaces do not exist yet for a leftover.
	lockPath = "/run/dbio-testfleet.lock"
	// netnsDir is where ip netns keeps its namespaces; a file's time there is
	// the namespace's creation time.
	netnsDir = "/run/netns"
	// maxHosts fills one /24: .1 is the root namespace, .2 to .254 the hosts.
	maxHosts = 253
)

var (
	namespacePattern = regexp.MustCompile(`^dbio-th([0-9]+)-([0-9a-f]{6})-h[0-9]+$`)
	linkPattern      = regexp.MustCompile(`^dbth-([0-9a-f]{6})(-[0-9]+)?$`)
)

// fleetRange is where fleets take their /24s: a private range that a
// machine's own networks rarely use, and a subnet is taken only when no
// address or route on the machine overlaps it.
var fleetRange = netip.MustParsePrefix("10.213.0.0/16")

// ipTool runs iproute2's ip.
type ipTool string

// run runs ip with args and returns its standard output.
func (ip ipTool) run(ctx context.Context, args ...string) ([]byte, error) {
	return ip.runInput(ctx, nil, args...)
}

func (ip ipTool) runInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, string(ip), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// batch runs ip commands, one a line, in one ip process; namespace, when set,
// runs them inside that network namespace. force goes on past a failing line
// (for teardown, where everything that can go should go).
func (ip ipTool) batch(ctx context.Context, namespace string, force bool, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	var args []string
	if namespace != "" {
		args = append(args, "-n", namespace)
	}
	if force {
		args = append(args, "-force")
	}
	args = append(args, "-batch", "-")
	_, err := ip.runInput(ctx, []byte(strings.Join(lines, "\n")+"\n"), args...)
	return err
}

// namespaces lists the network namespaces ip netns knows.
func (ip ipTool) namespaces(ctx context.Context) ([]string, error) {
	out, err := ip.run(ctx, "-j", "netns", "list")
	if err != nil {
		return nil, err
	}
	var list []struct {
		Name string `json:"name"`
	}
	if len(bytes.TrimSpace(out)) > 0 {
		if err := json.Unmarshal(out, &list); err != nil {
			return nil, fmt.Errorf("reading ip netns list: %w", err)
		}
	}
	names := make([]string, 0, len(list))
	for _, n := range list {
		names = append(names, n.Name)
	}
	return names, nil
}

// links lists the root namespace's network interfaces.
func (ip ipTool) links(ctx context.Context) ([]string, error) {
	out, err := ip.run(ctx, "-j", "link", "show")
	if err != nil {
		return nil, err
	}
	var list []struct {
		Name string `json:"ifname"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("reading ip link show: %w", err)
	}
	names := make([]string, 0, len(list))
	for _, l := range list {
		names = append(names, l.Name)
	}
	return names, nil
}

// pids lists the processes in a namespace.
func (ip ipTool) pids(ctx context.Context, namespace string) ([]int, error) {
	out, err := ip.run(ctx, "netns", "pids", namespace)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("ip netns pids %s: unexpected %q", namespace, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// fleetNames lists the namespaces and root links of the fleet with id.
func (ip ipTool) fleetNames(ctx context.Context, id string) (namespaces, links []string, err error) {
	all, err := ip.namespaces(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range all {
		if m := namespacePattern.FindStringSubmatch(name); m != nil && m[2] == id {
			namespaces = append(namespaces, name)
		}
	}
	all, err = ip.links(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range all {
		if m := linkPattern.FindStringSubmatch(name); m != nil && m[1] == id {
			links = append(links, name)
		}
	}
	return namespaces, links, nil
}

// lockNetwork takes the machine-wide lock on fleet networks; closing what it
// returns releases it, and so does the death of the process.
func lockNetwork() (unlock func(), err error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the fleet lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", lockPath, err)
	}
	return func() { f.Close() }, nil
}

// freeSubnet picks a /24 that no address or route of the root namespace
// overlaps (other fleets' bridges hold theirs). The caller holds the network
// lock until the subnet is on its bridge.
func freeSubnet(ctx context.Context, ip ipTool) (netip.Prefix, error) {
	used, err := usedPrefixes(ctx, ip)
	if err != nil {
		return netip.Prefix{}, err
	}
	return firstFreeSubnet(used)
}

// firstFreeSubnet is the first /24 of fleetRange that overlaps none of used.
func firstFreeSubnet(used []netip.Prefix) (netip.Prefix, error) {
	base := fleetRange.Addr().As4()
	for third := 0; third < 256; third++ {
		candidate := netip.PrefixFrom(netip.AddrFrom4([4]byte{base[0], base[1], byte(third), 0}), 24)
		if !overlapsAny(candidate, used) {
			return candidate, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no free /24 left in %s for a test fleet: remove leftovers with Sweep (ip netns list | grep dbio-th)", fleetRange)
}

func overlapsAny(p netip.Prefix, used []netip.Prefix) bool {
	for _, u := range used {
		if p.Overlaps(u) {
			return true
		}
	}
	return false
}

// usedPrefixes lists the IPv4 addresses and route destinations of the root
// namespace, in every routing table; the default route is left out, since
// it overlaps everything.
func usedPrefixes(ctx context.Context, ip ipTool) ([]netip.Prefix, error) {
	var used []netip.Prefix
	out, err := ip.run(ctx, "-j", "-4", "addr", "show")
	if err != nil {
		return nil, err
	}
	var addrs []struct {
		Info []struct {
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal(out, &addrs); err != nil {
		return nil, fmt.Errorf("reading ip addr show: %w", err)
	}
	for _, a := range addrs {
		for _, info := range a.Info {
			if p, err := netip.ParsePrefix(fmt.Sprintf("%s/%d", info.Local, info.PrefixLen)); err == nil {
				used = append(used, p.Masked())
			}
		}
	}
	out, err = ip.run(ctx, "-j", "-4", "route", "show", "table", "all")
	if err != nil {
		return nil, err
	}
	var routes []struct {
		Dst string `json:"dst"`
	}
	if err := json.Unmarshal(out, &routes); err != nil {
		return nil, fmt.Errorf("reading ip route show: %w", err)
	}
	for _, r := range routes {
		if p, ok := parseDestination(r.Dst); ok {
			used = append(used, p)
		}
	}
	return used, nil
}

// parseDestination reads a route's destination: a prefix, or a bare address
// for a host route; "default" and anything unreadable are skipped.
func parseDestination(dst string) (netip.Prefix, bool) {
	if strings.Contains(dst, "/") {
		p, err := netip.ParsePrefix(dst)
		return p.Masked(), err == nil
	}
	a, err := netip.ParseAddr(dst)
	if err != nil || !a.Is4() {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, 32), true
}

// killNamespace kills every process in a namespace with SIGKILL until none is
// left: a process that forked while the first ones were killed is caught by
// the next listing.
func killNamespace(ctx context.Context, ip ipTool, namespace string) error {
	for {
		pids, err := ip.pids(ctx, namespace)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("killing pid %d in %s: %w", pid, namespace, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("processes %v still in %s: %w", pids, namespace, ctx.Err())
		case <-time.After(5 * time.Millisecond): // the kernel tears the killed processes down
		}
	}
}

// removeFleet kills every process in the fleet's namespaces, deletes its
// links (each host's veth, which takes the end inside the namespace along,
// then the bridge) and its namespaces, and checks that none of them is left.
// Links go before namespaces so that a sweeper in another process never sees a
// live fleet's bridge without its namespaces.
func removeFleet(ctx context.Context, ip ipTool, id string) error {
	namespaces, links, err := ip.fleetNames(ctx, id)
	if err != nil {
		return err
	}
	errs := make([]error, len(namespaces))
	var wg sync.WaitGroup
	for i, ns := range namespaces {
		wg.Go(func() { errs[i] = killNamespace(ctx, ip, ns) })
	}
	wg.Wait()
	// Veths ("dbth-<id>-<n>") sort after their bridge ("dbth-<id>"): reversed,
	// they go first.
	sort.Sort(sort.Reverse(sort.StringSlice(links)))
	var lines []string
	for _, l := range links {
		lines = append(lines, "link del "+l)
	}
	if err := ip.batch(ctx, "", true, lines); err != nil {
		errs = append(errs, err)
	}
	lines = lines[:0]
	for _, ns := range namespaces {
		lines = append(lines, "netns del "+ns)
	}
	if err := ip.batch(ctx, "", true, lines); err != nil {
		errs = append(errs, err)
	}
	namespaces, links, err = ip.fleetNames(ctx, id)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if left := append(namespaces, links...); len(left) > 0 {
		errs = append(errs, fmt.Errorf("fleet %s left behind: %s", id, strings.Join(left, ", ")))
	}
	return errors.Join(errs...)
}
