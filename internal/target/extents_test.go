package target

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"dbio/internal/testenv"
)

func TestExtentsOfAFragmentedFile(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole")
	if err := os.WriteFile(whole, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Extents(whole)
	testenv.Require(t, !errors.Is(err, ErrNoExtentMap), "a temporary directory on a filesystem with FIEMAP (ext4, xfs, btrfs)", testenv.HowBlockDeviceTemp)
	if err != nil {
		t.Fatal(err)
	}
	if n < 1 {
		t.Fatalf("a 1 MiB file has %d extents", n)
	}
	// A sparse file written in every other 64 KiB block has one extent per block written.
	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 64<<10)
	for i := range 16 {
		if _, err := f.WriteAt(block, int64(i*2)*int64(len(block))); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	if n, err := Extents(sparse); err != nil || n != 16 {
		t.Errorf("sparse file: %d extents, %v; want 16", n, err)
	}
	all, err := ExtentsUnder(dir)
	if err != nil || len(all) != 2 {
		t.Fatalf("ExtentsUnder: %+v %v", all, err)
	}
}

func TestExtentsOnTmpfs(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "dbio-extents-")
	testenv.Require(t, err == nil, "a writable tmpfs at /dev/shm", "mount one (Debian has it by default)")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("x"), 0o644)
	if _, err := Extents(p); !errors.Is(err, ErrNoExtentMap) {
		t.Errorf("tmpfs: err %v, want ErrNoExtentMap", err)
	}
}
