package fio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"dbio/internal/target"
	"dbio/internal/units"
)

// purgeWorkFile deallocates every block of dbio's working file, keeping its
// size: the SNIA-style profile's purge, done on the one file dbio laid out
// in its own directory and on nothing else. The file must be work.dat in a
// directory carrying dbio's marker, reached without following a link.
func purgeWorkFile(file string, size int64) (string, error) {
	dir := filepath.Dir(file)
	if filepath.Base(file) != workFile || filepath.Base(dir) != WorkSubdir {
		return "", fmt.Errorf("purge %s: %w: dbio purges only its own working file", file, target.ErrNotOwned)
	}
	if _, err := os.Lstat(dir); err != nil {
		return "", fmt.Errorf("purge %s: %w", file, err)
	}
	if err := target.CheckOwned(dir); err != nil {
		return "", fmt.Errorf("purge %s: %w", file, err)
	}
	if err := target.CheckFile(file); err != nil {
		return "", fmt.Errorf("purge: %w", err)
	}
	f, err := target.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("purge %s: %w", file, err)
	}
	defer f.Close()
	before, err := allocatedBytes(f)
	if err != nil {
		return "", fmt.Errorf("purge %s: %w", file, err)
	}
	if err := punchHole(f, size); err != nil {
		if errors.Is(err, syscall.EOPNOTSUPP) {
			return "", fmt.Errorf("purge %s: the filesystem cannot deallocate a file's blocks (fallocate PUNCH_HOLE: %v): use a target on ext4, xfs, btrfs or tmpfs, or another profile", file, err)
		}
		return "", fmt.Errorf("purge %s: %w", file, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("purge %s: %w", file, err)
	}
	after, err := allocatedBytes(f)
	if err != nil {
		return "", fmt.Errorf("purge %s: %w", file, err)
	}
	return purgedNote(file, size, before, after), nil
}

// purgedNote says what a purge of the working file did, from its
// allocated bytes before and after.
func purgedNote(file string, size, before, after int64) string {
	return fmt.Sprintf("purged the working file %s: %s of its %s deallocated (a hole punched over the whole file), %s still allocated; "+
		"the filesystem tells the device the blocks are free if it discards online or at the next fstrim. Only this file was purged, not the device",
		file, units.FormatBytes(uint64(max(before-after, 0))), units.FormatBytes(uint64(size)), units.FormatBytes(uint64(max(after, 0))))
}

// fallocate modes (linux/falloc.h): keep the size, deallocate the range.
const (
	fallocKeepSize  = 0x01
	fallocPunchHole = 0x02
)

// punchHole deallocates the first size bytes of f, keeping its size.
func punchHole(f *os.File, size int64) error {
	return syscall.Fallocate(int(f.Fd()), fallocKeepSize|fallocPunchHole, 0, size)
}

// allocatedBytes is the space the filesystem has allocated to f.
func allocatedBytes(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512, nil
	}
	return fi.Size(), nil
}

// allocatedAt is the space allocated to the file at path, 0 if unknown.
func allocatedAt(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n, _ := allocatedBytes(f)
	return n
}

// fullyAllocated says whether the file at path has a block for every byte:
// a purged file that was not filled again reads its holes as zeros without
// touching the device, and must not be measured as if it were laid out.
func fullyAllocated(path string, size int64) bool { return allocatedAt(path) >= size }
