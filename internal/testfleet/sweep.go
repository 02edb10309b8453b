package testfleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Sweep removes what fleets of test processes that are gone left behind:
// every namespace named dbio-th<pid>-<id>-h<n> whose creating process no
// longer runs (with the processes still in it), the links of those fleets,
// and any dbth-<id> link whose fleet has no namespace left. Fleets of running
// processes, this one's included, are left alone. Start sweeps before it
// builds; call Sweep directly to clean a machine after a test binary was
// killed (go test's -timeout, SIGKILL), which skips t.Cleanup. It returns the
// ids of the fleets it removed.
func Sweep(ctx context.Context) ([]string, error) {
	ip, err := lookPath("ip")
	if err != nil {
		return nil, err
	}
	unlock, err := lockNetwork()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return sweepLocked(ctx, ipTool(ip))
}

// sweepLocked is Sweep for a caller that holds the network lock.
func sweepLocked(ctx context.Context, ip ipTool) ([]string, error) {
	namespaces, err := ip.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	stale := map[string]bool{}
	for _, name := range namespaces {
		m := namespacePattern.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if ownerAlive(pid, namespaceCreated(name)) {
			live[m[2]] = true
		} else {
			stale[m[2]] = true
		}
	}
	links, err := ip.links(ctx)
	if err != nil {
		return nil, err
	}
	for _, name := range links {
		if m := linkPattern.FindStringSubmatch(name); m != nil && !live[m[1]] {
			stale[m[1]] = true
		}
	}
	var removed []string
	var errs []error
	for id := range stale {
		if live[id] {
			continue // a live fleet's namespace next to a dead one's: never touch it
		}
		if err := removeFleet(ctx, ip, id); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, id)
	}
	sort.Strings(removed)
	return removed, errors.Join(errs...)
}

// namespaceCreated is when ip netns made a namespace, or the zero time when
// that cannot be read (then a running owner pid counts as the owner).
func namespaceCreated(name string) time.Time {
	info, err := os.Stat(filepath.Join(netnsDir, name))
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}

// ownerAlive tells whether pid still runs the process that created a
// namespace at created. pid_max can be as low as 32768, so a pid is reused
// often: a process that started after the namespace is another one. Start
// times are known to about a second (boot time is counted in whole seconds),
// hence the slack.
func ownerAlive(pid int, created time.Time) bool {
	started, running, err := processStart(pid)
	if err != nil || !running {
		return false
	}
	if created.IsZero() {
		return true
	}
	return !started.After(created.Add(2 * time.Second))
}

// userHZ is the unit of /proc's process times, fixed at 100 on Linux for
// user space whatever the kernel's own tick.
const userHZ = 100

// processStart reads when pid started and whether it still runs (a zombie
// does not).
func processStart(pid int) (started time.Time, running bool, err error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, false, err
	}
	// The command name, field 2, may hold spaces and parentheses: the fields
	// that follow start after its last ')'.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return time.Time{}, false, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(stat[end+1:]))
	// fields[0] is field 3 (state); starttime is field 22.
	if len(fields) < 20 {
		return time.Time{}, false, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("/proc/%d/stat starttime: %w", pid, err)
	}
	boot, err := bootTime()
	if err != nil {
		return time.Time{}, false, err
	}
	running = fields[0] != "Z" && fields[0] != "X"
	return boot.Add(time.Duration(ticks) * time.Second / userHZ), running, nil
}

// bootTime reads the machine's boot time from /proc/stat.
func bootTime() (time.Time, error) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, line := range strings.Split(string(stat), "\n") {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			secs, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("/proc/stat btime: %w", err)
			}
			return time.Unix(secs, 0), nil
		}
	}
	return time.Time{}, errors.New("/proc/stat has no btime line")
}
