package server

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// residentPages counts the pages of path the page cache holds (mincore).
func residentPages(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	pages := (len(mem) + os.Getpagesize() - 1) / os.Getpagesize()
	vec := make([]byte, pages)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestDropTreeCache: the files a copy left cached (written and synced, as
// a pristine copy's are) leave the page cache, in subdirectories too, so
// that a server under a memory cap reads them on its own account.
func TestDropTreeCache(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "base"), 0o700); err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(dir, "top"), filepath.Join(dir, "base", "inner")}
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = byte(i)
	}
	for _, p := range files {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		for range 8 {
			if _, err := f.Write(block); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if n := residentPages(t, p); n == 0 {
			t.Skipf("%s: the file system keeps no written pages in the page cache (tmpfs?): nothing to drop", p)
		}
	}
	if err := os.Symlink(files[0], filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := DropTreeCache(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		if n := residentPages(t, p); n > 0 {
			t.Errorf("%s: %d pages still cached after DropTreeCache", p, n)
		}
	}
}
