package target

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

func TestOpenClaimsAMarkedDirectory(t *testing.T) {
	root := filepath.Join(t.TempDir(), "new", "target")
	if _, err := Open(root); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "--create-target") {
		t.Fatalf("Open of a missing target: %v, want a refusal saying how to create it", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatal("Open created a missing target")
	}
	tg, err := Create(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tg.Dir, results.MarkerName)); err != nil {
		t.Fatal("no marker")
	}
	// Opening again accepts dbio's own directory.
	if _, err := Open(root); err != nil {
		t.Fatal(err)
	}
	sub, err := tg.Sub("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sub, "db"), []byte("x"), 0o644)
	if err := tg.RemoveSub("sqlite"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sub); !os.IsNotExist(err) {
		t.Fatal("sub directory not removed")
	}
}

func TestOpenRefuses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	foreign := t.TempDir()
	os.Mkdir(filepath.Join(foreign, DirName), 0o755)
	tests := []struct{ path, want string }{
		{"", "empty"},
		{"/dev/null", "device node"},
		{file, "not a directory"},
		{foreign, "did not create"},
	}
	for _, tt := range tests {
		if _, err := Open(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%q) = %v, want error containing %q", tt.path, err, tt.want)
		}
	}
}

func TestRemoveSubRefusesUnmarked(t *testing.T) {
	tg, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(tg.Dir, "users"), 0o755)
	os.WriteFile(filepath.Join(tg.Dir, "users", "keep"), []byte("x"), 0o644)
	if err := tg.RemoveSub("users"); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("RemoveSub of an unmarked directory: %v", err)
	}
	if err := tg.RemoveSub("../x"); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("RemoveSub outside: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tg.Dir, "users", "keep")); err != nil {
		t.Fatal("unmarked data removed")
	}
}

func TestEnsureSpace(t *testing.T) {
	tg, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.EnsureSpace(1, "a byte"); err != nil {
		t.Fatal(err)
	}
	err = tg.EnsureSpace(1<<62, "tpcc at this scale")
	if err == nil || !strings.Contains(err.Error(), "needs about 4.0 EiB") {
		t.Fatalf("EnsureSpace: %v", err)
	}
}

func TestStorageFromMountinfo(t *testing.T) {
	const mountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 27 259:3 / /mnt/nvme rw,noatime - xfs /dev/nvme0n1p1 rw
31 27 259:3 /sub /mnt/other\040dir rw - xfs /dev/nvme0n1p1 rw
`
	tests := []struct {
		path         string
		major, minor uint32
		want         results.Storage
	}{
		{"/home/x", 254, 0, results.Storage{MountPoint: "/", FSType: "ext4", Source: "/dev/vda", DevNumber: "254:0"}},
		{"/mnt/nvme/db", 259, 3, results.Storage{MountPoint: "/mnt/nvme", FSType: "xfs", Source: "/dev/nvme0n1p1", DevNumber: "259:3"}},
		{"/mnt/other dir/a", 259, 3, results.Storage{MountPoint: "/mnt/other dir", FSType: "xfs", Source: "/dev/nvme0n1p1", DevNumber: "259:3"}},
	}
	for _, tt := range tests {
		got, err := storageFromMountinfo(strings.NewReader(mountinfo), tt.path, tt.major, tt.minor)
		if err != nil || got.MountPoint != tt.want.MountPoint || got.FSType != tt.want.FSType || got.DevNumber != tt.want.DevNumber {
			t.Errorf("%s: %+v %v, want %+v", tt.path, got, err, tt.want)
		}
	}
}

// TestPhysicalThroughPartitionAndDM resolves a dm device on a partition through a fixture /sys.
func TestPhysicalThroughPartitionAndDM(t *testing.T) {
	sys := t.TempDir()
	mk := func(rel, content string) {
		p := filepath.Join(sys, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	mk("devices/virtual/block/dm-0/dev", "253:0\n")
	mk("devices/pci/nvme/block/nvme0n1/dev", "259:0\n")
	mk("devices/pci/nvme/block/nvme0n1/size", "2000\n")
	mk("devices/pci/nvme/block/nvme0n1/queue/rotational", "0\n")
	mk("devices/pci/nvme/block/nvme0n1/queue/scheduler", "[none] mq-deadline\n")
	mk("devices/pci/nvme/block/nvme0n1/device/model", "Fast NVMe\n")
	mk("devices/pci/nvme/block/nvme0n1/nvme0n1p1/partition", "1\n")
	os.MkdirAll(filepath.Join(sys, "devices/virtual/block/dm-0/slaves"), 0o755)
	os.Symlink(filepath.Join(sys, "devices/pci/nvme/block/nvme0n1/nvme0n1p1"), filepath.Join(sys, "devices/virtual/block/dm-0/slaves/nvme0n1p1"))
	os.MkdirAll(filepath.Join(sys, "dev/block"), 0o755)
	os.Symlink(filepath.Join(sys, "devices/virtual/block/dm-0"), filepath.Join(sys, "dev/block/253:0"))
	dev, disks := SysFS{Sys: sys}.physical("253:0")
	if dev != "dm-0" || len(disks) != 1 {
		t.Fatalf("device %q, disks %+v", dev, disks)
	}
	d := disks[0]
	if d.Name != "nvme0n1" || d.Model != "Fast NVMe" || d.Rotational || d.SizeBytes != 2000*512 || d.Scheduler != "none" || d.DevNumber != "259:0" {
		t.Errorf("disk %+v", d)
	}
}

// TestResolveNeedsItsRoots: storage is resolved through the /proc and /sys a
// caller gives, never through a default, and a root left out is an error
// rather than a read relative to the working directory.
func TestResolveNeedsItsRoots(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		fs   SysFS
		ok   bool
	}{
		{"none", SysFS{}, false},
		{"no /sys", SysFS{Proc: "/proc"}, false},
		{"no /proc", SysFS{Sys: "/sys"}, false},
		{"a /proc without a mount table", SysFS{Proc: t.TempDir(), Sys: "/sys"}, false},
		{"the host's", HostFS(), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.fs.Resolve(dir)
			if (err == nil) != tt.ok {
				t.Fatalf("Resolve through %+v: %+v, %v; want ok=%v", tt.fs, s, err, tt.ok)
			}
			if tt.ok && s.FSType == "" {
				t.Errorf("Resolve through the host's roots found no filesystem: %+v", s)
			}
		})
	}
}
