package fio

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/units"
)

// Working-file sizing bounds.
const (
	// MaxDefaultSize caps the default so that laying the file out stays a
	// matter of seconds to minutes even on a large host.
	MaxDefaultSize = 64 << 30
	// RAMFileSize is the default on a filesystem that lives in memory.
	RAMFileSize = 1 << 30
	minFileSize = 256 << 20
)

// SizeRule is the --help text for the working-file default.
const SizeRule = `The working file defaults to twice the host's RAM: larger than anything a cache
can hold (the page cache when O_DIRECT is refused, and the DRAM of SSDs and RAID
controllers, which is smaller than RAM), so reads reach the device as they would
for a database larger than memory. It is bounded by half of the target's free
space (the rest stays for databases and backups) and by 64 GiB (so that laying
it out takes seconds to minutes); on tmpfs it is 1 GiB, since the storage is RAM
itself. It is created once per target in <target>/dbio/fio, reused by every
point and by later runs of the same size. --size overrides all of this.`

// DefaultSize applies SizeRule: memBytes of RAM, availBytes free on a target
// of filesystem fsType (counting a working file dbio may replace). It says
// why in a sentence for the results' notes, and refuses a target too small
// for a meaningful file.
func DefaultSize(memBytes, availBytes uint64, fsType string) (int64, string, error) {
	half := availBytes / 2
	if memBytes == 0 {
		memBytes = MaxDefaultSize / 2 // unknown: aim at the cap
	}
	if fsType == "tmpfs" || fsType == "ramfs" {
		size := min(uint64(RAMFileSize), half) &^ (1<<20 - 1)
		if size < minFileSize {
			return 0, "", fmt.Errorf("%s has %s free: too little for a fio working file; free some memory or pass --size", fsType, units.FormatBytes(availBytes))
		}
		return int64(size), fmt.Sprintf("working file %s: the target is %s (RAM), no cache to outgrow", units.FormatBytes(size), fsType), nil
	}
	size := min(2*memBytes, uint64(MaxDefaultSize), half) &^ (1<<20 - 1)
	if size < minFileSize {
		return 0, "", fmt.Errorf("the target has %s free: too little for a fio working file larger than caches; free some space or pass a smaller --size", units.FormatBytes(availBytes))
	}
	why := fmt.Sprintf("working file %s: twice the RAM (%s)", units.FormatBytes(size), units.FormatBytes(memBytes))
	switch size {
	case uint64(MaxDefaultSize):
		why = fmt.Sprintf("working file %s: capped (twice the RAM would be %s)", units.FormatBytes(size), units.FormatBytes(2*memBytes))
	case half &^ (1<<20 - 1):
		why = fmt.Sprintf("working file %s: half the target's free space (%s); twice the RAM would be %s", units.FormatBytes(size), units.FormatBytes(availBytes), units.FormatBytes(2*memBytes))
	}
	if size < memBytes {
		why += "; smaller than RAM, so buffered figures (without O_DIRECT) would include page-cache hits"
	}
	return int64(size), why, nil
}

// hostMemory is the host's RAM in bytes, 0 if unknown.
func hostMemory() uint64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// Layout is what a dry run says of a target's working file before anything
// is written: its size and why, and whether laying it out is needed and
// about how long it takes.
type Layout struct {
	Target string
	Size   int64
	Why    string
	// Reused is a working file of dbio's own of this size already there:
	// the run reuses it (unless holes a purge left make it lay it out again).
	Reused bool
	// AssumedMBPerSec is the sequential write rate the estimate takes, by
	// the kind of storage; Kind names it.
	AssumedMBPerSec float64
	Kind            string
}

// Time is the estimated time to lay the file out.
func (l Layout) Time() time.Duration {
	if l.Reused || l.AssumedMBPerSec <= 0 {
		return 0
	}
	return time.Duration(float64(l.Size) / 1e6 / l.AssumedMBPerSec * float64(time.Second)).Round(time.Second)
}

// Sequential write rates a layout estimate assumes: what common devices
// of each kind sustain with 1 MiB writes; the run prints the real rate.
const (
	rotatingMBPerSec = 150
	solidMBPerSec    = 500
	memoryMBPerSec   = 2000
)

// EstimateLayout sizes the working file of target path as a run would
// (size, when not 0, is --size), reading the target without writing to it.
func EstimateLayout(sys target.SysFS, path string, size int64, memBytes uint64) (Layout, error) {
	in, problems := target.Inspect(sys, path, true)
	if len(problems) > 0 {
		return Layout{}, problems[0]
	}
	if memBytes == 0 {
		memBytes = hostMemory()
	}
	owned := target.OwnedBytes(path, filepath.Join(WorkSubdir, workFile))
	l := Layout{Target: path, Size: size, Why: "working file " + units.FormatBytes(uint64(size)) + ": --size"}
	if size <= 0 {
		var err error
		if l.Size, l.Why, err = DefaultSize(memBytes, in.FreeBytes+owned, in.Storage.FSType); err != nil {
			return Layout{}, err
		}
	}
	if fi, err := os.Stat(filepath.Join(in.Path, target.DirName, WorkSubdir, workFile)); err == nil && owned > 0 {
		l.Reused = fi.Size() == l.Size
	}
	l.AssumedMBPerSec, l.Kind = solidMBPerSec, "an SSD"
	switch {
	case in.Storage.FSType == "tmpfs" || in.Storage.FSType == "ramfs":
		l.AssumedMBPerSec, l.Kind = memoryMBPerSec, "memory"
	case slices.ContainsFunc(in.Storage.Physical, func(d results.Disk) bool { return d.Rotational }):
		l.AssumedMBPerSec, l.Kind = rotatingMBPerSec, "a rotating disk"
	}
	return l, nil
}
