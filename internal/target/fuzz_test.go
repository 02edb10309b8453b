package target

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sampleMountinfo is a mount table as Linux 6.1 writes it, with an escaped
// space in a mount point.
const sampleMountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 27 259:3 / /mnt/nvme rw,noatime shared:1 master:2 - xfs /dev/nvme0n1p1 rw,attr2
31 27 259:3 /sub /mnt/other\040dir rw - xfs /dev/nvme0n1p1 rw
`

// FuzzMountinfo reads a mount table as a container runtime or a hostile
// mount namespace may present it. A mount it picks must be of the path's
// device, hold the path, and name its filesystem and source.
func FuzzMountinfo(f *testing.F) {
	f.Add([]byte(sampleMountinfo), "/mnt/other dir/db", uint32(259), uint32(3))
	f.Add([]byte(sampleMountinfo), "/home/x", uint32(254), uint32(0))
	f.Add([]byte("1 2 0:5 / /a\\134b - tmpfs tmpfs rw\n"), `/a\b/c`, uint32(0), uint32(5))
	f.Fuzz(func(t *testing.T, data []byte, path string, major, minor uint32) {
		s, err := storageFromMountinfo(strings.NewReader(string(data)), path, major, minor)
		want := fmt.Sprintf("%d:%d", major, minor)
		if s.DevNumber != want {
			t.Errorf("device %q, want %q", s.DevNumber, want)
		}
		if err != nil {
			return
		}
		if !within(path, s.MountPoint) {
			t.Errorf("mount %q does not hold %q", s.MountPoint, path)
		}
		if s.FSType == "" || s.Source == "" {
			t.Errorf("mount %+v without filesystem or source", s)
		}
	})
}

// FuzzUnescapeMount checks that a mount point the kernel escaped (space,
// tab, newline and backslash as octal) reads back as it was.
func FuzzUnescapeMount(f *testing.F) {
	f.Add("/mnt/other dir")
	f.Add("/a\\b\tc\nd")
	f.Add(`/odd\040name`)
	f.Fuzz(func(t *testing.T, mount string) {
		var b strings.Builder
		for i := 0; i < len(mount); i++ {
			switch c := mount[i]; c {
			case ' ', '\t', '\n', '\\':
				fmt.Fprintf(&b, "\\%03o", c)
			default:
				b.WriteByte(c)
			}
		}
		if got := unescapeMount(b.String()); got != mount {
			t.Errorf("%q escaped as %q reads back as %q", mount, b.String(), got)
		}
		if got := unescapeMount(mount); len(got) > len(mount) {
			t.Errorf("%q unescapes to the longer %q", mount, got)
		}
	})
}

// FuzzDiskFacts reads a block device's size, rotational flag and scheduler
// from a fixture /sys directory.
func FuzzDiskFacts(f *testing.F) {
	f.Add("2000\n", "0\n", "[none] mq-deadline\n")
	f.Add("18446744073709551615", "1", "mq-deadline kyber [bfq]")
	f.Fuzz(func(t *testing.T, size, rotational, scheduler string) {
		dir := filepath.Join(t.TempDir(), "sda")
		for rel, content := range map[string]string{"size": size, "queue/rotational": rotational, "queue/scheduler": scheduler} {
			p := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d := SysFS{}.disk(dir)
		if sectors, err := strconv.ParseUint(strings.TrimSpace(size), 10, 64); err == nil {
			if hi, lo := bits.Mul64(sectors, 512); hi != 0 && d.SizeBytes != 0 || hi == 0 && d.SizeBytes != lo {
				t.Errorf("%d sectors read as %d bytes", sectors, d.SizeBytes)
			}
		} else if d.SizeBytes != 0 {
			t.Errorf("size %q read as %d bytes", size, d.SizeBytes)
		}
		if d.Rotational != (strings.TrimSpace(rotational) == "1") {
			t.Errorf("rotational %q read as %v", rotational, d.Rotational)
		}
		if strings.ContainsAny(d.Scheduler, "[] \t\n") {
			t.Errorf("scheduler %q from %q", d.Scheduler, scheduler)
		}
	})
}
