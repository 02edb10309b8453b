// Package memlimit caps a database server's whole memory, the page cache
// its reads and writes fill included, with a memory cgroup: cgroup v1's
// memory.limit_in_bytes or cgroup v2's memory.max, whichever the host
// offers. Both count the page cache a group's processes bring in, so a
// server capped at 512 MB on a machine of 24 GB reads its data as it would
// on a machine of 512 MB: from the disk, once its share of the cache is full.
package memlimit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"dbio/internal/cgroup"
	"dbio/internal/execx"
)

// Host locates the cgroup hierarchies, so tests can point it at a fixture tree.
type Host struct {
	// V1Memory is the cgroup v1 memory hierarchy, e.g. /sys/fs/cgroup/memory.
	V1Memory string
	// V2 is a cgroup v2 hierarchy with the memory controller, e.g. /sys/fs/cgroup.
	V2 string
}

// SystemHost finds the hierarchies mounted under sys, the root of sysfs
// ("/sys" on the running system, given by cmd).
func SystemHost(sys string) Host {
	v1, v2 := cgroup.Find(sys, "memory", "memory.limit_in_bytes", "memory")
	return Host{V1Memory: v1, V2: v2}
}

// Available says whether the host can cap memory, and if not why.
func (h Host) Available() error {
	if h.V1Memory == "" && h.V2 == "" {
		return ErrUnsupported
	}
	return nil
}

// ErrUnsupported means the host cannot cap a server's memory.
var ErrUnsupported = errors.New("this host has neither a cgroup v1 memory hierarchy nor a cgroup v2 memory controller (needs root and a kernel with memory cgroups)")

// Group is one memory cgroup dbio created for a server.
type Group struct {
	Path    string `json:"path"`
	Version string `json:"version"` // "v1-memory" or "v2-memory"
	Limit   int64  `json:"limit_bytes"`
}

// Create makes the cgroup dbio-mem-<name>-<pid> capped at limit bytes, the
// page cache included and swap excluded (the cap is memory, not memory
// plus swap). Groups an earlier dbio left behind are swept first (see Sweep).
func (h Host) Create(name string, limit int64) (*Group, error) {
	if limit <= 0 {
		return nil, errors.New("no memory cap to apply")
	}
	if err := h.Available(); err != nil {
		return nil, err
	}
	h.Sweep()
	dirName := cgroup.Name("mem", name, os.Getpid())
	v := strconv.FormatInt(limit, 10)
	// Each file caps the group; an optional one is written only where the
	// kernel keeps swap accounting, so that the server cannot grow past the
	// cap into swap (the cap is memory, not memory plus swap).
	type capFile struct {
		file, value string
		optional    bool
	}
	var g *Group
	var files []capFile
	if h.V1Memory != "" {
		g = &Group{Path: filepath.Join(h.V1Memory, dirName), Version: "v1-memory", Limit: limit}
		files = []capFile{{"memory.limit_in_bytes", v, false}, {"memory.memsw.limit_in_bytes", v, true}}
	} else {
		g = &Group{Path: filepath.Join(h.V2, dirName), Version: "v2-memory", Limit: limit}
		// The memory controller must be enabled for the children of the parent.
		_ = os.WriteFile(filepath.Join(h.V2, "cgroup.subtree_control"), []byte("+memory"), 0o644)
		files = []capFile{{"memory.max", v, false}, {"memory.swap.max", "0", true}}
	}
	if err := os.Mkdir(g.Path, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%w: create %s: %v (run as root)", ErrUnsupported, g.Path, err)
	}
	for _, f := range files {
		p := filepath.Join(g.Path, f.file)
		if f.optional && !cgroup.Exists(p) {
			continue
		}
		if err := os.WriteFile(p, []byte(f.value+"\n"), 0o644); err != nil {
			g.Remove()
			return nil, fmt.Errorf("cap memory at %d bytes: %s: %w", limit, p, err)
		}
	}
	return g, nil
}

// Sweep removes the groups an earlier dbio made in the memory hierarchies
// and could not remove (it was killed), once they hold no process; see
// cgroup.Sweep. It returns the paths removed.
func (h Host) Sweep() []string { return cgroup.Sweep(h.V1Memory, h.V2) }

// AllowUser lets processes of uid join the group by themselves, so that a
// server started unprivileged enters the group before it allocates anything.
func (g *Group) AllowUser(uid, gid uint32) error {
	return cgroup.AllowUser(g.Path, uid, gid)
}

// Wrap returns c started through a shell that first joins the group and
// then execs the program, which keeps the shell's PID: the server, every
// process it forks and every restart through the same wrapper are inside.
func (g *Group) Wrap(c execx.Cmd) execx.Cmd {
	return cgroup.Wrap(g.Path, c)
}

// Members are the processes in the group now.
func (g *Group) Members() ([]int, error) {
	return cgroup.Members(g.Path)
}

// Usage is what the group's processes hold, in bytes.
type Usage struct {
	// Current is all the memory charged to the group, page cache included.
	Current uint64
	// Peak is the most Current has been since the group was created.
	Peak uint64
	// Cache is the page cache charged to it (file-backed pages).
	Cache uint64
	// Anon is its processes' own memory (heap, stacks, anonymous shared memory).
	Anon uint64
	// OOMKills counts processes the kernel killed because the group was full
	// and nothing more could be reclaimed.
	OOMKills uint64

	// The counters below grow from the group's creation; their rates show
	// the cap binding.

	// LimitHits counts the times the group reached its cap and had to
	// reclaim (v1's memory.failcnt and memory.memsw.failcnt, v2's "max"
	// event).
	LimitHits uint64
	// Refaults counts pages evicted from the group and needed again soon
	// after (memory.stat's workingset_refault_file and _anon): the cache
	// is too small for what the server reads.
	Refaults uint64
	// MajorFaults counts page faults its processes waited on the disk for.
	MajorFaults uint64
	// PressureSome and PressureFull are the time some, and all, of the
	// group's non-idle tasks stalled on memory (v2's memory.pressure), in
	// microseconds; HasPressure says the kernel keeps them for the group
	// (cgroup v1 does not).
	PressureSome, PressureFull uint64
	HasPressure                bool
}

// ForcedCharge is how far past its cap a group may be charged: the kernel
// refuses page cache and process memory beyond the cap, but charges a few
// pages of its own memory (allocations that must not fail) regardless, so
// a peak a page or so over the cap is the kernel's, not the server's.
const ForcedCharge = 1 << 20

// Within says whether the group stayed at or under limit bytes, now and at
// its peak, but for what the kernel charges past any cap (ForcedCharge).
func (u Usage) Within(limit uint64) bool {
	return u.Current <= limit+ForcedCharge && u.Peak <= limit+ForcedCharge
}

// Usage reads the group's memory now.
func (g *Group) Usage() (Usage, error) {
	var u Usage
	read := func(name string) (uint64, error) {
		b, err := os.ReadFile(filepath.Join(g.Path, name))
		if err != nil {
			return 0, err
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, nil
		}
		return strconv.ParseUint(s, 10, 64)
	}
	stat, err := readKeyed(filepath.Join(g.Path, "memory.stat"))
	if err != nil {
		return u, err
	}
	switch g.Version {
	case "v2-memory":
		if u.Current, err = read("memory.current"); err != nil {
			return u, err
		}
		u.Peak, _ = read("memory.peak") // kernels before 5.19 keep no peak
		u.Cache, u.Anon = stat["file"], stat["anon"]+stat["shmem"]
		events, _ := readKeyed(filepath.Join(g.Path, "memory.events"))
		u.OOMKills, u.LimitHits = events["oom_kill"], events["max"]
		u.PressureSome, u.PressureFull, u.HasPressure = readPressure(filepath.Join(g.Path, "memory.pressure"))
	default:
		if u.Current, err = read("memory.usage_in_bytes"); err != nil {
			return u, err
		}
		u.Peak, _ = read("memory.max_usage_in_bytes")
		// v1's "cache" includes shared memory (tmpfs and SysV/POSIX shm, as
		// PostgreSQL's shared buffers are); the file-backed page cache is
		// the rest.
		u.Cache = stat["cache"] - min(stat["shmem"], stat["cache"])
		u.Anon = stat["rss"] + stat["shmem"]
		oom, _ := readKeyed(filepath.Join(g.Path, "memory.oom_control"))
		u.OOMKills = oom["oom_kill"]
		// Where swap is accounted, Create caps memory plus swap at the same
		// figure, and that counter is the one a full group hits first.
		hits, _ := read("memory.failcnt")
		swapHits, _ := read("memory.memsw.failcnt")
		u.LimitHits = hits + swapHits
	}
	u.Refaults = stat["workingset_refault_file"] + stat["workingset_refault_anon"] + stat["workingset_refault"] // the last on kernels before 5.9
	u.MajorFaults = stat["pgmajfault"]
	return u, nil
}

// readPressure reads the total stall times of a pressure file ("some
// avg10=… total=N" and "full … total=N"), in microseconds.
func readPressure(path string) (some, full uint64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		kind, rest, _ := strings.Cut(line, " ")
		for _, f := range strings.Fields(rest) {
			v, found := strings.CutPrefix(f, "total=")
			if !found {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				continue
			}
			switch kind {
			case "some":
				some, ok = n, true
			case "full":
				full = n
			}
		}
	}
	return some, full, ok
}

// readKeyed reads a file of "key value" lines.
func readKeyed(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, sc.Err()
}

// Remove moves any process left in the group back to the parent and deletes
// the group. The page cache still charged to it goes to the parent with it.
func (g *Group) Remove() error {
	return cgroup.Remove(g.Path)
}
