package capture

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/target"
)

// DeviceAt is the block device node path names (/dev/sdb, /dev/nvme0n1p2).
func DeviceAt(sys target.SysFS, path string) (blocktrace.Device, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return blocktrace.Device{}, setupf("--device %s: %v", path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFBLK {
		return blocktrace.Device{}, setupf("--device %s is not a block device: give a device node such as /dev/sdb, or --target with a directory on it", path)
	}
	rdev := uint64(st.Rdev)
	major := uint32((rdev>>8)&0xfff) | uint32((rdev>>32)&^0xfff)
	minor := uint32(rdev&0xff) | uint32((rdev>>12)&^0xff)
	return named(sys, major, minor), nil
}

// DeviceUnder is the block device holding the file system dir is on.
func DeviceUnder(sys target.SysFS, dir string) (blocktrace.Device, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return blocktrace.Device{}, setupf("--target %s: %v", dir, err)
	}
	if !fi.IsDir() {
		return blocktrace.Device{}, setupf("--target %s is not a directory: give the directory holding the database's files", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return blocktrace.Device{}, setupf("--target %s: %v", dir, err)
	}
	s, err := sys.Resolve(abs)
	if err != nil {
		return blocktrace.Device{}, setupf("--target %s: %v", dir, err)
	}
	maj, min, _ := strings.Cut(s.DevNumber, ":")
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if err1 != nil || err2 != nil || ma == 0 {
		return blocktrace.Device{}, setupf("--target %s is on %s (%s), which has no block device to trace: give a directory on a disk", dir, s.FSType, s.Source)
	}
	return named(sys, uint32(ma), uint32(mi)), nil
}

// named finds the kernel's name of major:minor in /sys.
func named(sys target.SysFS, major, minor uint32) blocktrace.Device {
	d := blocktrace.Device{Major: major, Minor: minor, Name: fmt.Sprintf("%d-%d", major, minor)}
	b, err := os.ReadFile(filepath.Join(sys.Sys, "dev", "block", d.Number(), "uevent"))
	if err != nil {
		return d
	}
	for _, l := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(l, "DEVNAME="); ok && n != "" && !strings.ContainsAny(n, " \t") {
			d.Name = n
		}
	}
	return d
}

// DiskStats are a device's counters from /proc/diskstats: completed
// requests and 512-byte sectors by direction, and flushes.
type DiskStats struct {
	Reads         int64 `json:"reads"`
	ReadSectors   int64 `json:"read_sectors"`
	Writes        int64 `json:"writes"`
	WriteSectors  int64 `json:"write_sectors"`
	Discards      int64 `json:"discards"`
	DiscardSector int64 `json:"discard_sectors"`
	Flushes       int64 `json:"flushes"`
}

// Sub is the counters' growth since before.
func (s DiskStats) Sub(before DiskStats) DiskStats {
	return DiskStats{
		Reads: s.Reads - before.Reads, ReadSectors: s.ReadSectors - before.ReadSectors,
		Writes: s.Writes - before.Writes, WriteSectors: s.WriteSectors - before.WriteSectors,
		Discards: s.Discards - before.Discards, DiscardSector: s.DiscardSector - before.DiscardSector,
		Flushes: s.Flushes - before.Flushes,
	}
}

// ReadDiskStats reads the counters of devices from proc's diskstats, in
// the devices' order.
func ReadDiskStats(proc string, devices []blocktrace.Device) ([]DiskStats, error) {
	f, err := os.Open(filepath.Join(proc, "diskstats"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byNumber := map[string]DiskStats{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		x := strings.Fields(sc.Text())
		if len(x) < 14 {
			continue
		}
		n := make([]int64, len(x))
		for i := 3; i < len(x); i++ {
			n[i], _ = strconv.ParseInt(x[i], 10, 64)
		}
		s := DiskStats{Reads: n[3], ReadSectors: n[5], Writes: n[7], WriteSectors: n[9]}
		if len(x) >= 18 {
			s.Discards, s.DiscardSector = n[14], n[16]
		}
		if len(x) >= 20 {
			s.Flushes = n[18]
		}
		byNumber[x[0]+":"+x[1]] = s
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]DiskStats, len(devices))
	for i, d := range devices {
		s, ok := byNumber[d.Number()]
		if !ok {
			return nil, fmt.Errorf("device %s (%s) is not in %s/diskstats", d.Name, d.Number(), proc)
		}
		out[i] = s
	}
	return out, nil
}

// AwaitIO returns once dev has completed n more requests than when it was
// called (the workload a capture is for has begun), or ctx ends.
func AwaitIO(ctx context.Context, proc string, dev blocktrace.Device, n int64) error {
	devs := []blocktrace.Device{dev}
	before, err := ReadDiskStats(proc, devs)
	if err != nil {
		return err
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		now, err := ReadDiskStats(proc, devs)
		if err != nil {
			return err
		}
		if d := now[0].Sub(before[0]); d.Reads+d.Writes >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
