// Package smallfs gives tests a real filesystem that fills up: a tmpfs of a
// chosen size mounted for one test (and unmounted when it ends, failed or
// not), and a way to fill what is left of it, so that a test can watch dbio
// meet "no space left on device" where it writes.
package smallfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes, open to every user (a managed
// server's unprivileged account writes in it), on a new directory and
// returns that directory. Mounting needs root: the test is skipped without it.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	dir := filepath.Join(t.TempDir(), "smallfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// t.TempDir is private to its creator; the servers' users must reach in.
	for _, d := range []string{filepath.Dir(filepath.Dir(dir)), filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0755", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("mount a %d-byte tmpfs on %s: %v: %s", size, dir, err, out)
	}
	// Registered after TempDir's own cleanup, so it runs first: the
	// directory is removed only once nothing is mounted on it. A lazy
	// unmount cannot fail on a process still holding a file there.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("unmount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// Free is the space left for files on the filesystem holding dir.
func Free(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// Fill takes all but leave bytes of the filesystem holding dir with a file
// in dir (named .smallfs-filler), so that the next writes beyond leave fail
// with ENOSPC. Others may be writing there at the same time (that is the
// point): what they take while it fills is not left to them.
func Fill(dir string, leave int64) error {
	f, err := os.OpenFile(filepath.Join(dir, ".smallfs-filler"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		free, err := Free(dir)
		if err != nil {
			return err
		}
		take := free - leave
		if take <= 0 {
			break
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
			return err
		}
		err = syscall.Fallocate(int(f.Fd()), 0, st.Size, take)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("fill %s: %w", dir, err)
		}
		// Someone wrote in between: measure again.
	}
	if leave > 0 {
		return nil
	}
	// What fallocate's rounding left, block by block.
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}
