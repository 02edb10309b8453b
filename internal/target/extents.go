package target

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"unsafe"

	"dbio/internal/results"
)

// FS_IOC_FIEMAP and the fiemap header layout from linux/fiemap.h.
const (
	fsIocFiemap    = 0xC020660B
	fiemapFlagSync = 0x1
)

type fiemapHeader struct {
	Start         uint64
	Length        uint64
	Flags         uint32
	MappedExtents uint32
	ExtentCount   uint32
	Reserved      uint32
}

// ErrNoExtentMap means the filesystem cannot report extents (tmpfs, some network filesystems).
var ErrNoExtentMap = errors.New("filesystem does not report file extents (FIEMAP)")

// Extents counts the extents (fragments) of a file with the FIEMAP ioctl,
// after syncing it so that delayed allocation has placed its blocks.
func Extents(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := fiemapHeader{Length: ^uint64(0), Flags: fiemapFlagSync}
	// Asking for zero extents makes the kernel only count them.
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&h)))
	if errno != 0 {
		if errno == syscall.EOPNOTSUPP || errno == syscall.ENOTTY || errno == syscall.EINVAL {
			return 0, fmt.Errorf("%s: %w", path, ErrNoExtentMap)
		}
		return 0, fmt.Errorf("fiemap %s: %w", path, errno)
	}
	return int(h.MappedExtents), nil
}

// ExtentsUnder counts the extents of every regular file below dir, largest
// files first; files that vanish meanwhile (a database's temporary files) are skipped.
func ExtentsUnder(dir string) ([]results.FileExtents, error) {
	var out []results.FileExtents
	var firstErr error
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() || d.Name() == results.MarkerName {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		n, err := Extents(p)
		if err != nil {
			if errors.Is(err, ErrNoExtentMap) {
				return err
			}
			if !errors.Is(err, os.ErrNotExist) && firstErr == nil {
				firstErr = err
			}
			return nil
		}
		out = append(out, results.FileExtents{Path: p, Bytes: fi.Size(), Extents: n})
		return nil
	})
	if err != nil {
		return out, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bytes > out[j].Bytes })
	return out, firstErr
}
