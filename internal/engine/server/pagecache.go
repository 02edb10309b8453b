package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// fadviseDontNeed is POSIX_FADV_DONTNEED: the kernel drops the file's
// clean pages from the page cache.
const fadviseDontNeed = 4

// DropTreeCache drops from the page cache the pages of every regular file
// below dir, which must be on the disk already (a copy is synced as it is
// made). A server under a memory cap counts in its cgroup only the pages it
// reads itself: pages a copy by dbio left cached are on dbio's account, so
// the capped server would read its files from memory it was not given, and
// its cap would not bind until they were evicted. Files whose pages are
// dirty keep them: the advice drops only clean ones.
func DropTreeCache(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadviseDontNeed, 0, 0); errno != 0 {
			return &os.PathError{Op: "fadvise", Path: path, Err: errno}
		}
		return nil
	})
}
