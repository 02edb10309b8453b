// Package iolimit emulates a storage class on one machine: it puts a
// database server (or fio) in a block-I/O cgroup that caps IOPS and
// bandwidth on the devices behind a target, using cgroup v1
// blkio.throttle.* or cgroup v2 io.max, whichever the host offers.
package iolimit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/cgroup"
	"dbio/internal/execx"
	"dbio/internal/units"
)

// Limits are per-device caps; zero means unlimited.
type Limits struct {
	ReadIOPS  int64 `json:"riops,omitempty" toml:"riops"`
	WriteIOPS int64 `json:"wiops,omitempty" toml:"wiops"`
	ReadBPS   int64 `json:"rbps,omitempty" toml:"rbps"`
	WriteBPS  int64 `json:"wbps,omitempty" toml:"wbps"`
	// Preset names the preset the limits came from, if any.
	Preset string `json:"preset,omitempty" toml:"-"`
	// Class names the storage class the limits were sized as, if any.
	Class string `json:"class,omitempty" toml:"-"`
}

// IsZero reports whether no limit is set.
func (l Limits) IsZero() bool {
	return l.ReadIOPS == 0 && l.WriteIOPS == 0 && l.ReadBPS == 0 && l.WriteBPS == 0
}

// String renders limits in the form Parse reads.
func (l Limits) String() string {
	var parts []string
	add := func(k string, v int64, bytes bool) {
		if v == 0 {
			return
		}
		s := strconv.FormatInt(v, 10)
		switch {
		case bytes && v%(1<<30) == 0:
			s = strconv.FormatInt(v>>30, 10) + "GB"
		case bytes && v%(1<<20) == 0:
			s = strconv.FormatInt(v>>20, 10) + "MB"
		}
		parts = append(parts, k+"="+s)
	}
	add("riops", l.ReadIOPS, false)
	add("wiops", l.WriteIOPS, false)
	add("rbps", l.ReadBPS, true)
	add("wbps", l.WriteBPS, true)
	return strings.Join(parts, ",")
}

// Preset is a named storage class with the figures it comes from.
type Preset struct {
	Limits Limits
	Source string
}

// presets are storage classes from the studies' device figures. Bandwidth is
// per drive; where a study gives only group figures, they are divided by the
// number of drives in the group. Unexported and read through LookupPreset, so
// no caller can change a preset for the rest of the process.
var presets = map[string]Preset{
	"sata-ssd": {
		Limits: Limits{ReadIOPS: 75000, WriteIOPS: 30000, ReadBPS: 500 << 20, WriteBPS: 450 << 20},
		Source: "the hybrid NVMe and SATA study: 8 SATA drives gave 3.97 GB/s of 64k sequential reads (about 500 MB/s per drive); IOPS from the class of enterprise SATA SSD datasheets (4k random read 75k, write 30k), below the 6 Gb/s interface ceiling",
	},
	"nvme-gen3": {
		Limits: Limits{ReadIOPS: 400000, WriteIOPS: 150000, ReadBPS: 2700 << 20, WriteBPS: 1800 << 20},
		Source: "the hybrid NVMe and SATA study: 4 NVMe drives gave 10.76 GB/s of 64k sequential reads (about 2.7 GB/s per drive); the NVMe vs SATA test: NVMe gave 6.5x the sequential throughput of SATA; IOPS from PCIe 3.0 x4 datasheet class figures",
	},
	"sata-hdd": {
		Limits: Limits{ReadIOPS: 200, WriteIOPS: 200, ReadBPS: 180 << 20, WriteBPS: 180 << 20},
		Source: "a 7,200 rpm SATA disk: about 200 random IOPS (seek plus half a rotation) and 180 MB/s sequential",
	},
	"san-raid5": {
		Limits: Limits{ReadIOPS: 5000, WriteIOPS: 3000, ReadBPS: 250 << 20, WriteBPS: 200 << 20},
		Source: "the SAN RAID 5 layout of a DBA's SQLIO matrix, in the range such a matrix shows for these arrays under the 20 ms latency line; the issue's example limits",
	},
}

// Class is a storage class sized from another: every cap of the class it
// is sized from, divided by how much slower a seed study measured it. The
// fastest class is sized by the suite, from what the database on the
// machine at hand demands, so that the slower classes bind where the study
// found them to; the ratios between classes are the study's.
type Class struct {
	Name string
	// Of is the class this one is sized from; "" for one the suite sizes.
	Of string
	// Slower divides every cap (IOPS and bandwidth) of Of.
	Slower float64
	// Latency is how many times longer the study measured this class's
	// I/O to take than Of's. Block-I/O cgroups cap rates and cannot add
	// latency, so it is recorded, not emulated: latency grows only where
	// the demand exceeds a cap and I/O queues behind it.
	Latency float64
	Source  string
}

// classes are the classes a suite may name without sizing them itself.
var classes = map[string]Class{
	"nvme": {Name: "nvme", Source: "the fastest class, sized by the suite under [classes]"},
	"sata": {Name: "sata", Of: "nvme", Slower: 6.5, Latency: 5.6,
		Source: "the NVMe vs SATA study's device tests: the NVMe drive gave 6.5x the SATA drive's sequential throughput, at 5.6x lower latency"},
}

// LookupClass finds a storage class by name.
func LookupClass(name string) (Class, bool) {
	c, ok := classes[name]
	return c, ok
}

// ClassNames lists the classes in order.
func ClassNames() []string {
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SizeClass gives the limits of class name: those the suite defined for it,
// else those of the class it is sized from divided by its ratio. defined
// holds the classes the suite sized, by name.
func SizeClass(name string, defined map[string]Limits) (Limits, error) {
	if l, ok := defined[name]; ok {
		l.Class = name
		return l, nil
	}
	c, ok := classes[name]
	if !ok {
		known := ClassNames()
		for n := range defined {
			if _, builtin := classes[n]; !builtin {
				known = append(known, n)
			}
		}
		sort.Strings(known)
		return Limits{}, fmt.Errorf("unknown storage class %q: use one of %s, or size it under [classes]", name, strings.Join(known, ", "))
	}
	if c.Of == "" {
		return Limits{}, fmt.Errorf("the %s class is sized by the suite: add [classes] %s = \"riops=N,wiops=N,rbps=SIZE,wbps=SIZE\", what the fastest storage gives the database on this machine", name, name)
	}
	of, err := SizeClass(c.Of, defined)
	if err != nil {
		return Limits{}, fmt.Errorf("the %s class is sized from the %s class: %w", name, c.Of, err)
	}
	div := func(v, unit int64) int64 {
		if v == 0 {
			return 0
		}
		// Whole I/Os, and bandwidth in whole MiB when there is one.
		if float64(v)/c.Slower < float64(unit) {
			unit = 1
		}
		return max(1, int64(float64(v)/c.Slower/float64(unit)+0.5)*unit)
	}
	return Limits{ReadIOPS: div(of.ReadIOPS, 1), WriteIOPS: div(of.WriteIOPS, 1), ReadBPS: div(of.ReadBPS, 1<<20), WriteBPS: div(of.WriteBPS, 1<<20), Class: name}, nil
}

// LookupPreset finds a storage class by name.
func LookupPreset(name string) (Preset, bool) {
	p, ok := presets[name]
	return p, ok
}

// PresetNames lists the presets in order.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Parse reads "riops=5000,wiops=3000,rbps=250MB,wbps=200MB" or a preset name,
// optionally followed by overrides ("sata-ssd,wiops=1000").
func Parse(s string) (Limits, error) {
	var l Limits
	s = strings.TrimSpace(s)
	if s == "" {
		return l, errors.New("empty limit: use riops=N,wiops=N,rbps=SIZE,wbps=SIZE or a preset: " + strings.Join(PresetNames(), ", "))
	}
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			p, found := presets[part]
			if !found || i > 0 {
				return l, fmt.Errorf("limit %q: %q is neither key=value nor a preset (presets: %s)", s, part, strings.Join(PresetNames(), ", "))
			}
			l = p.Limits
			l.Preset = part
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "riops", "wiops":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n <= 0 {
				return l, fmt.Errorf("limit %q: %s must be a positive whole number of I/Os per second", s, k)
			}
			if strings.EqualFold(k, "riops") {
				l.ReadIOPS = n
			} else {
				l.WriteIOPS = n
			}
		case "rbps", "wbps":
			n, err := units.ParseBytes(v)
			if err != nil || n <= 0 {
				return l, fmt.Errorf("limit %q: %s must be a positive size per second such as 250MB", s, k)
			}
			if strings.EqualFold(k, "rbps") {
				l.ReadBPS = n
			} else {
				l.WriteBPS = n
			}
		default:
			return l, fmt.Errorf("limit %q: unknown key %q (use riops, wiops, rbps, wbps)", s, k)
		}
	}
	return l, nil
}

// Host locates the cgroup hierarchies, so tests can point it at a fixture tree.
type Host struct {
	// V1Blkio is the cgroup v1 blkio hierarchy, e.g. /sys/fs/cgroup/blkio.
	V1Blkio string
	// V2 is the cgroup v2 hierarchy, e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified.
	V2 string
}

// SystemHost finds the hierarchies mounted under sys, the root of sysfs
// ("/sys" on the running system, given by cmd), so that nothing here
// assumes which machine it runs on.
func SystemHost(sys string) Host {
	v1, v2 := cgroup.Find(sys, "blkio", "blkio.throttle.read_iops_device", "io")
	return Host{V1Blkio: v1, V2: v2}
}

// Group is one cgroup dbio created for a target's limits.
type Group struct {
	Path    string   `json:"path"`
	Version string   `json:"version"` // "v1-blkio" or "v2-io"
	Devices []string `json:"devices"` // major:minor
	Limits  Limits   `json:"limits"`
}

// ErrUnsupported means the host cannot apply block-I/O limits.
var ErrUnsupported = errors.New("this host cannot apply block-I/O limits")

// Create makes the cgroup dbio-io-<name>-<pid> with the limits on each
// device (major:minor of the physical disks behind the target), after
// sweeping the groups an earlier dbio left (see Sweep). It refuses clearly
// when the host has neither cgroup v1 blkio nor a v2 io controller it may use.
func (h Host) Create(name string, devices []string, l Limits) (*Group, error) {
	g, err := h.Prepare(name, devices, l)
	if err != nil {
		return nil, err
	}
	if err := g.Apply(); err != nil {
		g.Remove()
		return nil, err
	}
	return g, nil
}

// Prepare makes the group as Create does but leaves its devices uncapped
// until Apply: a run's processes join it from their start, and the caps
// bind from the moment the run measures (a server's start and a database's
// load are not what a storage class is emulated for, and a load capped at
// a slow class's write IOPS takes many times as long).
func (h Host) Prepare(name string, devices []string, l Limits) (*Group, error) {
	if l.IsZero() {
		return nil, errors.New("no limits to apply")
	}
	if len(devices) == 0 {
		return nil, fmt.Errorf("%w: the target has no block device behind it (tmpfs or a network filesystem cannot be throttled); drop --limit for it", ErrUnsupported)
	}
	h.Sweep()
	dirName := cgroup.Name("io", name, os.Getpid())
	var g *Group
	switch {
	case h.V1Blkio != "":
		g = &Group{Path: filepath.Join(h.V1Blkio, dirName), Version: "v1-blkio", Devices: devices, Limits: l}
	case h.V2 != "":
		g = &Group{Path: filepath.Join(h.V2, dirName), Version: "v2-io", Devices: devices, Limits: l}
		// The io controller must be enabled for the children of the parent.
		_ = os.WriteFile(filepath.Join(h.V2, "cgroup.subtree_control"), []byte("+io"), 0o644)
	default:
		return nil, fmt.Errorf("%w: neither cgroup v1 blkio nor a cgroup v2 io controller is available (needs root and a kernel with blk-throttle)", ErrUnsupported)
	}
	if err := os.Mkdir(g.Path, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%w: create %s: %v (run as root)", ErrUnsupported, g.Path, err)
	}
	return g, nil
}

// Apply writes the group's limits on each of its devices; from then on
// every I/O of its members to them is capped.
func (g *Group) Apply() error {
	l := g.Limits
	if g.Version == "v2-io" {
		for _, d := range g.Devices {
			line := d
			for _, kv := range []struct {
				k string
				v int64
			}{{"riops", l.ReadIOPS}, {"wiops", l.WriteIOPS}, {"rbps", l.ReadBPS}, {"wbps", l.WriteBPS}} {
				if kv.v > 0 {
					line += fmt.Sprintf(" %s=%d", kv.k, kv.v)
				}
			}
			if err := os.WriteFile(filepath.Join(g.Path, "io.max"), []byte(line+"\n"), 0o644); err != nil {
				return fmt.Errorf("%w: io.max on device %s: %v", ErrUnsupported, d, err)
			}
		}
		return nil
	}
	files := []struct {
		file string
		v    int64
	}{
		{"blkio.throttle.read_iops_device", l.ReadIOPS},
		{"blkio.throttle.write_iops_device", l.WriteIOPS},
		{"blkio.throttle.read_bps_device", l.ReadBPS},
		{"blkio.throttle.write_bps_device", l.WriteBPS},
	}
	for _, d := range g.Devices {
		for _, f := range files {
			if f.v == 0 {
				continue
			}
			if err := os.WriteFile(filepath.Join(g.Path, f.file), []byte(fmt.Sprintf("%s %d\n", d, f.v)), 0o644); err != nil {
				return fmt.Errorf("%w: %s on device %s: %v", ErrUnsupported, f.file, d, err)
			}
		}
	}
	return nil
}

// Lift takes the group's caps off its devices again, its members staying
// in it: what they do once the measured phases are over (a database's
// consistency checks, a server's shutdown) runs at the device's own
// speed, and the group's counters keep counting.
func (g *Group) Lift() error {
	l := g.Limits
	if g.Version == "v2-io" {
		for _, d := range g.Devices {
			if err := os.WriteFile(filepath.Join(g.Path, "io.max"), []byte(d+" riops=max wiops=max rbps=max wbps=max\n"), 0o644); err != nil {
				return fmt.Errorf("lift io.max on device %s: %w", d, err)
			}
		}
		return nil
	}
	for _, d := range g.Devices {
		for file, v := range map[string]int64{
			"blkio.throttle.read_iops_device": l.ReadIOPS, "blkio.throttle.write_iops_device": l.WriteIOPS,
			"blkio.throttle.read_bps_device": l.ReadBPS, "blkio.throttle.write_bps_device": l.WriteBPS,
		} {
			if v == 0 {
				continue
			}
			// A rule of 0 removes the device's rule (cgroup v1's blk-throttle).
			if err := os.WriteFile(filepath.Join(g.Path, file), []byte(d+" 0\n"), 0o644); err != nil {
				return fmt.Errorf("lift %s on device %s: %w", file, d, err)
			}
		}
	}
	return nil
}

// Sweep removes the groups an earlier dbio made in the block-I/O
// hierarchies and could not remove (it was killed), once they hold no
// process; see cgroup.Sweep. It returns the paths removed.
func (h Host) Sweep() []string { return cgroup.Sweep(h.V1Blkio, h.V2) }

// AddPID moves a running process (and the children it forks afterwards) into the group.
func (g *Group) AddPID(pid int) error {
	return cgroup.AddPID(g.Path, pid)
}

// AllowUser lets processes of uid join the group by themselves, so that a
// server started unprivileged can enter the group before its first I/O.
func (g *Group) AllowUser(uid, gid uint32) error {
	return cgroup.AllowUser(g.Path, uid, gid)
}

// Wrap returns c started through a shell that first joins the group, so that
// not one I/O of the program escapes the limits.
func (g *Group) Wrap(c execx.Cmd) execx.Cmd {
	return cgroup.Wrap(g.Path, c)
}

// Remove moves any process left in the group back to the parent and deletes the group.
func (g *Group) Remove() error {
	return cgroup.Remove(g.Path)
}

// IOWait says whether the kernel keeps the group's own I/O wait time (the
// time its I/Os spent queued, throttle included), and in which file; when
// it keeps none, why not. cgroup v1 keeps blkio.io_wait_time only under the
// CFQ scheduler (kernels before 5.0) and blkio.bfq.io_wait_time only under
// BFQ built with its cgroup debug statistics; cgroup v2's io.stat counts
// I/Os and bytes, never their wait.
func (g *Group) IOWait() (file, why string) {
	for _, f := range []string{"blkio.io_wait_time", "blkio.bfq.io_wait_time"} {
		if cgroup.Exists(filepath.Join(g.Path, f)) {
			return filepath.Join(g.Path, f), ""
		}
	}
	if g.Version == "v2-io" {
		return "", "cgroup v2's io.stat counts I/Os and bytes but keeps no wait time"
	}
	return "", "cgroup v1 keeps blkio.io_wait_time only under the CFQ I/O scheduler (kernels before 5.0) or BFQ built with its cgroup debug statistics, and this kernel offers neither for the group"
}
