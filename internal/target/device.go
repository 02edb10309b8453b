package target

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"dbio/internal/results"
)

// SysFS locates the /proc and /sys trees a target is resolved through. It is
// passed down from cmd rather than read from a package variable, so that
// tests point it at fixtures and nothing below cmd assumes which host it is on.
type SysFS struct {
	Proc string
	Sys  string
}

// HostFS is the running system's /proc and /sys; cmd/dbio creates it once.
func HostFS() SysFS { return SysFS{Proc: "/proc", Sys: "/sys"} }

// errNoRoot is what a lookup through a zero SysFS returns: reading
// "self/mountinfo" relative to the working directory would be a silent wrong answer.
var errNoRoot = errors.New("target: no /proc and /sys root given: pass target.HostFS()")

// Storage resolves the mount, filesystem and block devices behind the target.
func (t *Target) Storage(sys SysFS) (results.Storage, error) {
	return sys.Resolve(t.Path)
}

// Resolve finds the storage behind path: stat gives the device number, the
// mount table gives the filesystem, and /sys/dev/block leads through
// partitions and stacked devices to the physical disks.
func (fs SysFS) Resolve(path string) (results.Storage, error) {
	if fs.Proc == "" || fs.Sys == "" {
		return results.Storage{}, errNoRoot
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return results.Storage{}, fmt.Errorf("stat %s: %w", path, err)
	}
	major, minor := devMajor(uint64(st.Dev)), devMinor(uint64(st.Dev))
	f, err := os.Open(filepath.Join(fs.Proc, "self", "mountinfo"))
	if err != nil {
		return results.Storage{}, fmt.Errorf("read mount table: %w", err)
	}
	defer f.Close()
	s, err := storageFromMountinfo(f, path, major, minor)
	if err != nil {
		return s, err
	}
	if major == 0 {
		return s, nil // tmpfs, overlay and other filesystems without a block device
	}
	s.Device, s.Physical = fs.physical(s.DevNumber)
	return s, nil
}

func devMajor(dev uint64) uint32 { return uint32((dev>>8)&0xfff) | uint32((dev>>32)&^0xfff) }
func devMinor(dev uint64) uint32 { return uint32(dev&0xff) | uint32((dev>>12)&^0xff) }

// storageFromMountinfo picks the mount holding path: the entry with the
// path's device number and the longest mount point that prefixes path.
func storageFromMountinfo(r io.Reader, path string, major, minor uint32) (results.Storage, error) {
	want := fmt.Sprintf("%d:%d", major, minor)
	var best results.Storage
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || len(fields) < sep+3 {
			continue
		}
		if fields[2] != want {
			continue
		}
		mp := unescapeMount(fields[4])
		if !within(path, mp) || len(mp) < len(best.MountPoint) {
			continue
		}
		best = results.Storage{MountPoint: mp, FSType: fields[sep+1], Source: fields[sep+2], DevNumber: want}
	}
	if err := sc.Err(); err != nil {
		return best, fmt.Errorf("read mount table: %w", err)
	}
	if best.MountPoint == "" {
		return results.Storage{DevNumber: want}, fmt.Errorf("no mount found for %s (device %s)", path, want)
	}
	return best, nil
}

func within(path, mount string) bool {
	if mount == "/" {
		return true
	}
	return path == mount || strings.HasPrefix(path, mount+"/")
}

// unescapeMount undoes the octal escapes (\040 for space) of /proc mount tables.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// physical walks /sys/dev/block/M:m: a partition leads to its disk, a dm or md
// device to its slaves, recursively.
func (fs SysFS) physical(devNumber string) (string, []results.Disk) {
	link, err := filepath.EvalSymlinks(filepath.Join(fs.Sys, "dev", "block", devNumber))
	if err != nil {
		return "", nil
	}
	name := filepath.Base(link)
	seen := map[string]bool{}
	var disks []results.Disk
	var walk func(dir string)
	walk = func(dir string) {
		if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
			walk(filepath.Dir(dir))
			return
		}
		slaves, _ := os.ReadDir(filepath.Join(dir, "slaves"))
		if len(slaves) > 0 {
			for _, s := range slaves {
				next, err := filepath.EvalSymlinks(filepath.Join(dir, "slaves", s.Name()))
				if err == nil {
					walk(next)
				}
			}
			return
		}
		n := filepath.Base(dir)
		if seen[n] {
			return
		}
		seen[n] = true
		disks = append(disks, fs.disk(dir))
	}
	walk(link)
	sort.Slice(disks, func(i, j int) bool { return disks[i].Name < disks[j].Name })
	return name, disks
}

func (fs SysFS) disk(dir string) results.Disk {
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	d := results.Disk{Name: filepath.Base(dir), DevNumber: read("dev"), Model: read("device/model"), Rotational: read("queue/rotational") == "1"}
	if sectors, err := strconv.ParseUint(read("size"), 10, 64); err == nil && sectors <= math.MaxUint64/512 {
		d.SizeBytes = sectors * 512
	}
	// The active scheduler is the bracketed word: "mq-deadline [none]".
	for _, w := range strings.Fields(read("queue/scheduler")) {
		if name, ok := strings.CutPrefix(w, "["); ok && strings.HasSuffix(name, "]") && !strings.ContainsAny(name[:len(name)-1], "[]") && len(name) > 1 {
			d.Scheduler = name[:len(name)-1]
		}
	}
	return d
}
