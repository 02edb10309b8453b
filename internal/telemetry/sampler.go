package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"dbio/internal/results"
)

// Point is one named per-second value of one sample (see the package
// documentation for the names and their units).
type Point struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// CounterSource is implemented by engine instances that expose cumulative
// counters (buffer hits and reads, checkpoints, WAL bytes…). The sampler
// turns them into per-second rates named engine_<name>_per_s.
type CounterSource interface {
	Stats(ctx context.Context) (map[string]float64, error)
}

// Options configures a Sampler.
type Options struct {
	// FS is where /proc is read; HostFS() for the running system.
	FS FS
	// Devices are the block devices to watch: kernel names as in
	// /proc/diskstats ("vda", "nvme0n1", "dm-0"; a "/dev/" prefix is
	// accepted) or device numbers ("253:0"). The caller resolves a target to
	// them with internal/target (Storage().Physical).
	Devices []string
	// SelfPID is dbio's process; 0 means the calling process (/proc/self).
	SelfPID int
	// SelfChildren counts dbio's descendants (fio, for instance) as part of
	// the load generator. Server processes are never counted twice.
	SelfChildren bool
	// ServerPIDs returns the database server's processes; it is called on
	// every sample, so a restarted server is followed. Nil when the engine is
	// not a server.
	ServerPIDs func() []int
	// ServerChildren adds the descendants of ServerPIDs (PostgreSQL's
	// backends are children of the postmaster).
	ServerChildren bool
	// InProcessEngine says the engine runs inside dbio (SQLite), so dbio's
	// CPU is load generator and engine together; the summary says so.
	InProcessEngine bool
	// ServerUnknown says the engine is a server whose processes dbio
	// cannot see (the user's, elsewhere): no server figures, and no CPU of
	// other processes, which would count the server's among them.
	ServerUnknown bool
	// Counters are the engine's cumulative counters; nil when it has none.
	Counters CounterSource
	// CounterTimeout bounds one Stats call so that a stuck database cannot
	// stall sampling (default 500 ms).
	CounterTimeout time.Duration
	// MemoryGroup reads the memory cgroup that caps the server, nil when
	// none does; it is called on every sample while the run holds the
	// group. A failed read leaves the group out of that second.
	MemoryGroup func() (MemoryGroup, error)
	// IOGroup reads the block-I/O cgroup that caps the run's storage
	// (--limit, a storage class), nil when none does; it is called on
	// every sample while the run holds the group. A failed read leaves the
	// group out of that second.
	IOGroup func() (IOGroup, error)
	// PageSize is the memory page size of the machine FS describes, in
	// bytes; 0 means this machine's. Set it when reading snapshots taken
	// elsewhere.
	PageSize int
	// Hosts are read through their node exporters at every sample, each
	// within HostReadTimeout, beside this machine (see RemoteHost).
	Hosts []RemoteHost
}

// MemoryGroup is the state of the memory cgroup capping the server at one
// sample: levels in bytes, and counters that grow from the group's creation.
type MemoryGroup struct {
	// Limit is the cap; Usage all that is charged to the group, of which
	// Cache is page cache (file-backed pages) and Anon its processes' own.
	Limit, Usage, Cache, Anon uint64
	// LimitHits counts the times the group reached its cap and had to
	// reclaim; Refaults the pages it evicted and read back soon after;
	// MajorFaults the faults its processes waited on the disk for;
	// OOMKills the processes the kernel killed for want of memory.
	LimitHits, Refaults, MajorFaults, OOMKills uint64
	// PressureSome and PressureFull are the group's own memory stall
	// totals in microseconds, where the kernel keeps them (HasPressure).
	PressureSome, PressureFull uint64
	HasPressure                bool
}

// IOGroup is the state of the block-I/O cgroup capping the run's storage
// at one sample: its caps, and what it was served since its creation.
type IOGroup struct {
	// Caps are the group's caps on each of its devices: I/Os per second
	// for the IOPS kinds, bytes per second for the bandwidth kinds; a kind
	// the group does not cap is absent (or 0).
	Caps map[results.IOCapKind]uint64
	// Devices are what the group's processes were served on each capped
	// device (by "major:minor") since the group was created: counters that
	// only grow. A device without I/O yet may be absent.
	Devices map[string]IOServed
	// PressureSome and PressureFull are the group's own I/O stall totals
	// in microseconds (cgroup v2's io.pressure), where the kernel keeps
	// them (HasPressure).
	PressureSome, PressureFull uint64
	HasPressure                bool
}

// IOServed is what a group was served on one device: I/Os and bytes, per
// direction.
type IOServed struct {
	ReadIOs, WriteIOs, ReadBytes, WriteBytes uint64
}

// of is the counter a cap of kind k limits the rate of.
func (s IOServed) of(k results.IOCapKind) uint64 {
	switch k {
	case results.IOCapReadIOPS:
		return s.ReadIOs
	case results.IOCapWriteIOPS:
		return s.WriteIOs
	case results.IOCapReadBPS:
		return s.ReadBytes
	case results.IOCapWriteBPS:
		return s.WriteBytes
	}
	return 0
}

// Sampler computes per-second telemetry from the deltas between successive
// Sample calls and accumulates them into per-step summaries. It is safe for
// use by several goroutines.
type Sampler struct {
	mu sync.Mutex

	fs              FS
	devices         []device
	psi             []string // resources with a readable /proc/pressure file
	loadavg         bool     // /proc/loadavg is readable
	dbio, server    *group
	counters        CounterSource
	memoryGroup     func() (MemoryGroup, error)
	ioGroup         func() (IOGroup, error)
	counterTimeout  time.Duration
	inProcessEngine bool
	serverUnknown   bool
	pageSize        uint64

	prev    snapshot
	hasPrev bool

	step     *accumulator
	problems problems
	cost     Cost

	hosts []*remoteHost
}

// device is one watched block device.
type device struct {
	name string // as in /proc/diskstats
	key  string // as in metric names
}

// snapshot is the cumulative state at one Sample call.
type snapshot struct {
	at     time.Time
	cpu    cpuTimes
	hasCPU bool
	cpus   int
	disks  map[string]diskStat
	psi    map[string]pressure
	uptime float64 // seconds since boot; 0 when unknown
	// load1 is the kernel's 1-minute load average; hasLoad says it was read.
	load1    float64
	hasLoad  bool
	counters map[string]float64
	// memcg is the server's memory cgroup; nil without one, or when it
	// could not be read.
	memcg *MemoryGroup
	// iocap is the block-I/O cgroup capping the storage; nil without one,
	// or when it could not be read.
	iocap *IOGroup
	// dbio and server are the process groups; server is nil without one.
	dbio, server *groupSnap
	// serverUnknown says the server's processes cannot be seen, though it
	// is a server: the CPU that is not dbio's is not all others'.
	serverUnknown bool
	// mem is the machine's memory, read from a host's node exporter (the
	// local sampler watches processes instead); nil when not read.
	mem *memInfo
}

// memInfo is a machine's memory at one sample, in bytes, as
// /proc/meminfo has it: all of it, what is available to new work without
// swapping (free and reclaimable), and the page cache.
type memInfo struct {
	total, available, cached uint64
}

// Cost is the CPU time the sampler itself has used.
type Cost struct {
	// Samples counts Sample calls.
	Samples int `json:"samples"`
	// CPU is the total CPU time spent inside Sample.
	CPU time.Duration `json:"cpu_ns"`
	// Max is the most CPU time one Sample call took.
	Max time.Duration `json:"max_ns"`
}

// New prepares a sampler: it checks that /proc is readable and resolves the
// devices, so that a mistyped device fails before a run rather than leaving
// an empty column.
func New(o Options) (*Sampler, error) {
	if o.FS.Proc == "" {
		return nil, errors.New("telemetry: no /proc root given: pass telemetry.HostFS() in Options.FS")
	}
	s := &Sampler{
		fs:              o.FS,
		counters:        o.Counters,
		memoryGroup:     o.MemoryGroup,
		ioGroup:         o.IOGroup,
		counterTimeout:  o.CounterTimeout,
		inProcessEngine: o.InProcessEngine,
		serverUnknown:   o.ServerUnknown,
		step:            newAccumulator(),
		hosts:           newRemoteHosts(o.Hosts),
	}
	s.pageSize = uint64(o.PageSize)
	if o.PageSize <= 0 {
		s.pageSize = uint64(os.Getpagesize())
	}
	if s.counterTimeout <= 0 {
		s.counterTimeout = 500 * time.Millisecond
	}
	if err := readWith(s.fs.proc("stat"), func(r io.Reader) error { _, err := parseStat(r); return err }); err != nil {
		return nil, fmt.Errorf("telemetry: read CPU times: %w (is %s a procfs mount?)", err, s.fs.Proc)
	}
	if err := s.resolveDevices(o.Devices); err != nil {
		return nil, err
	}
	for _, res := range []string{"cpu", "io", "memory"} {
		if readWith(s.fs.proc("pressure", res), func(r io.Reader) error { _, err := parsePressure(r); return err }) == nil {
			s.psi = append(s.psi, res)
		}
	}
	// Like pressure, the load average is sampled where the kernel has it.
	s.loadavg = readWith(s.fs.proc("loadavg"), func(r io.Reader) error { _, err := parseLoadavg(r); return err }) == nil
	self := "self"
	if o.SelfPID > 0 {
		self = strconv.Itoa(o.SelfPID)
	} else if link, err := os.Readlink(s.fs.proc("self")); err == nil {
		self = link // a real pid, so that children and exclusions compare equal
	}
	s.dbio = &group{role: "dbio", roots: func() []string { return []string{self} }, children: o.SelfChildren}
	if o.ServerPIDs != nil {
		pids := o.ServerPIDs
		s.server = &group{role: "server", children: o.ServerChildren, roots: func() []string {
			var out []string
			for _, p := range pids() {
				if p > 0 {
					out = append(out, strconv.Itoa(p))
				}
			}
			return out
		}}
	}
	return s, nil
}

// resolveDevices matches each wanted device to a line of /proc/diskstats.
func (s *Sampler) resolveDevices(want []string) error {
	if len(want) == 0 {
		return nil
	}
	var all []diskStat
	if err := readWith(s.fs.proc("diskstats"), func(r io.Reader) (err error) { all, err = parseDiskstats(r); return err }); err != nil {
		return fmt.Errorf("telemetry: read disk statistics: %w", err)
	}
	seen := map[string]bool{}
	for _, w := range want {
		name := strings.TrimPrefix(strings.TrimSpace(w), "/dev/")
		found := ""
		for _, d := range all {
			if d.name == name || d.devNumber == name {
				found = d.name
				break
			}
		}
		if found == "" {
			var names []string
			for _, d := range all {
				if !strings.HasPrefix(d.name, "loop") && !strings.HasPrefix(d.name, "ram") {
					names = append(names, d.name)
				}
			}
			return fmt.Errorf("telemetry: block device %q is not in %s: pass a kernel device name (one of %s) or a major:minor number",
				w, s.fs.proc("diskstats"), strings.Join(names, ", "))
		}
		if !seen[found] {
			seen[found] = true
			s.devices = append(s.devices, device{name: found, key: metricKey(found)})
		}
	}
	return nil
}

// metricKey turns a device or counter name into the lower-case
// letters, digits and underscores used in metric names ("dm-0" → "dm_0").
func metricKey(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Sample reads the current counters and returns the per-second values since
// the previous call. The first call only records a baseline and returns
// nothing. Values are also added to the current step (see StartStep). The
// hosts' values follow this machine's, under their hosts' names.
func (s *Sampler) Sample(now time.Time) []Point {
	return s.SampleContext(context.Background(), now)
}

// SampleContext is Sample with a context for the engine counters query.
func (s *Sampler) SampleContext(ctx context.Context, now time.Time) []Point {
	s.mu.Lock()
	defer s.mu.Unlock()

	// Thread CPU time is exact only if the goroutine stays on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()

	// The hosts' pages are on their way while this machine is read.
	var hostPts chan []Point
	if len(s.hosts) > 0 {
		hostPts = make(chan []Point, 1)
		go func() { hostPts <- readHosts(ctx, s.hosts) }()
	}
	cur := s.read(ctx, now)
	var hosts []Point
	if hostPts != nil {
		hosts = <-hostPts
	}
	var pts []Point
	var dt float64
	if s.hasPrev {
		dt = now.Sub(s.prev.at).Seconds()
		if dt <= 0 {
			return nil // same or earlier time: nothing to divide by; keep the baseline
		}
		pts = rates(s.prev, cur, dt, s.devices)
	}
	s.prev, s.hasPrev = cur, true

	used := threadCPU() - start
	s.cost.Samples++
	s.cost.CPU += used
	s.cost.Max = max(s.cost.Max, used)
	if len(pts) > 0 {
		pts = append(pts, Point{"telemetry_cost_pct", 100 * used.Seconds() / dt})
		s.step.add(pts)
	}
	return append(pts, hosts...)
}

// delayAccounting says whether the kernel's delay accounting is on
// (kernel.task_delayacct, Linux 5.14+). Where the switch is missing or
// unreadable it counts as off: the run that switches it on says why not.
func delayAccounting(fs FS) bool {
	on := false
	readWith(fs.proc("sys", "kernel", "task_delayacct"), func(r io.Reader) error {
		var b [2]byte
		n, _ := io.ReadFull(r, b[:])
		on = n >= 1 && b[0] == '1'
		return nil
	})
	return on
}

// Cost returns the sampler's own CPU use since New.
func (s *Sampler) Cost() Cost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cost
}

// read takes one snapshot of every source. A source that fails is left out
// of this snapshot and noted for the step summary.
func (s *Sampler) read(ctx context.Context, now time.Time) snapshot {
	cur := snapshot{at: now, serverUnknown: s.serverUnknown}
	err := readWith(s.fs.proc("stat"), func(r io.Reader) error {
		ks, err := parseStat(r)
		cur.cpu, cur.cpus, cur.hasCPU = ks.cpu, ks.cpus, err == nil
		return err
	})
	s.problems.note("read CPU times", err)
	if !cur.hasCPU {
		cur.cpus = s.prev.cpus
	}

	if len(s.devices) > 0 {
		err := readWith(s.fs.proc("diskstats"), func(r io.Reader) error {
			all, err := parseDiskstats(r)
			if err != nil {
				return err
			}
			cur.disks = make(map[string]diskStat, len(s.devices))
			for _, d := range all {
				for _, w := range s.devices {
					if d.name == w.name {
						cur.disks[d.name] = d
					}
				}
			}
			return nil
		})
		s.problems.note("read disk statistics", err)
	}

	if len(s.psi) > 0 {
		cur.psi = make(map[string]pressure, len(s.psi))
		for _, res := range s.psi {
			err := readWith(s.fs.proc("pressure", res), func(r io.Reader) error {
				p, err := parsePressure(r)
				if err == nil {
					cur.psi[res] = p
				}
				return err
			})
			s.problems.note("read "+res+" pressure", err)
		}
	}

	if s.loadavg {
		err := readWith(s.fs.proc("loadavg"), func(r io.Reader) (err error) { cur.load1, err = parseLoadavg(r); return err })
		cur.hasLoad = err == nil
		s.problems.note("read load average", err)
	}

	err = readWith(s.fs.proc("uptime"), func(r io.Reader) (err error) { cur.uptime, err = parseUptime(r); return err })
	s.problems.note("read uptime", err)

	// The server first, so that a server started by dbio is not also
	// counted as dbio's child.
	// Threads' block-I/O delays are read only while the kernel accounts
	// them: off, every thread's would stand still at what it was.
	delays := delayAccounting(s.fs)
	var server map[string]bool
	if s.server != nil {
		cur.server = s.server.read(s.fs, s.pageSize, nil, delays)
		server = cur.server.pids
	}
	cur.dbio = s.dbio.read(s.fs, s.pageSize, server, delays)

	if s.memoryGroup != nil {
		m, err := s.memoryGroup()
		if err == nil {
			cur.memcg = &m
		}
		s.problems.note("read the server's memory cgroup", err)
	}

	if s.ioGroup != nil {
		g, err := s.ioGroup()
		if err == nil {
			cur.iocap = &g
		}
		s.problems.note("read the storage's block-I/O cgroup", err)
	}

	if s.counters != nil {
		cctx, cancel := context.WithTimeout(ctx, s.counterTimeout)
		c, err := s.counters.Stats(cctx)
		cancel()
		if err == nil {
			cur.counters = c
		}
		s.problems.note("read engine counters", err)
	}
	return cur
}
