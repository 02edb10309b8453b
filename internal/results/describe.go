package results

import (
	"fmt"
	"strings"

	"dbio/internal/units"
)

// Describe says what a target's storage is, in the words every report,
// terminal line and comparison uses: "ext4 on vda (QEMU HARDDISK,
// non-rotational)", "xfs on md0 → nvme0n1 (…) + nvme1n1 (…)", "tmpfs, no
// block device", with the storage-class limit dbio put on it, if any.
func (t TargetInfo) Describe() string {
	if t.Host != "" {
		return "on host " + t.Host
	}
	st := t.Storage
	s := st.FSType
	if s == "" {
		s = "unknown filesystem"
	}
	var disks []string
	for _, d := range st.Physical {
		disks = append(disks, d.Describe(false))
	}
	switch {
	case len(disks) > 0 && st.Device != "" && (len(st.Physical) != 1 || st.Physical[0].Name != st.Device):
		s += " on " + st.Device + " → " + strings.Join(disks, " + ")
	case len(disks) > 0:
		s += " on " + strings.Join(disks, " + ")
	case st.Device != "":
		s += " on " + st.Device
	default:
		s += ", no block device"
	}
	if t.Limit != nil {
		s += ", " + t.Limit.Describe()
	}
	return s
}

// FreeText is what was free on the target when the run started: its
// space, and its inodes beside it when they were low ("78.4 GiB", "1.0 GiB
// and 12 inodes").
func (t TargetInfo) FreeText() string {
	s := units.FormatBytes(t.FreeBytes)
	if t.FreeInodes != nil {
		s += fmt.Sprintf(" and %d inodes", *t.FreeInodes)
	}
	return s
}

// Describe says what a storage-class emulation capped: "capped at 500 read
// IOPS / 300 write IOPS (cgroup v1-blkio)", with the preset's name when the
// caps came from one.
func (l StorageLimit) Describe() string {
	var caps []string
	if l.ReadIOPS > 0 {
		caps = append(caps, units.GroupThousands(l.ReadIOPS)+" read IOPS")
	}
	if l.WriteIOPS > 0 {
		caps = append(caps, units.GroupThousands(l.WriteIOPS)+" write IOPS")
	}
	if l.ReadBPS > 0 {
		caps = append(caps, units.FormatBytes(uint64(l.ReadBPS))+"/s read")
	}
	if l.WriteBPS > 0 {
		caps = append(caps, units.FormatBytes(uint64(l.WriteBPS))+"/s write")
	}
	how := l.Mechanism
	if l.Preset != "" {
		how = l.Preset + " preset, " + how
	}
	if l.Class != "" {
		how = l.Class + " class, " + how
	}
	return "capped at " + strings.Join(caps, " / ") + " (" + how + ")"
}

// Describe says what a disk is: "vda (QEMU HARDDISK, non-rotational)", with
// its size and I/O scheduler when full.
func (d Disk) Describe(full bool) string {
	var attrs []string
	if d.Model != "" {
		attrs = append(attrs, d.Model)
	}
	if full && d.SizeBytes > 0 {
		attrs = append(attrs, units.FormatBytes(d.SizeBytes))
	}
	if d.Rotational {
		attrs = append(attrs, "rotational")
	} else {
		attrs = append(attrs, "non-rotational")
	}
	if full && d.Scheduler != "" {
		attrs = append(attrs, "scheduler "+d.Scheduler)
	}
	return d.Name + " (" + strings.Join(attrs, ", ") + ")"
}
