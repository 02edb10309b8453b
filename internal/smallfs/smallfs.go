// Package smallfs gives tests a real filesystem that fills up: a tmpfs of a
// chosen size mounted for one test (and unmounted when it ends, failed or
// not), and a way to fill what is left of it, so that a test can watch dbio
// meet "no space left on device" where it writes; and a small disk of its
// own (a loop device in such a tmpfs), which block-I/O limits apply to.
package smallfs

import (
	"bytes"
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
	return mount(t, fmt.Sprintf("size=%d,mode=0755", size))
}

// MountInodes is Mount with room for only inodes files and directories
// (tmpfs's nr_inodes; its root directory takes one), so that a test can
// meet a filesystem that runs out of inodes with space to spare.
func MountInodes(t testing.TB, size, inodes int64) string {
	t.Helper()
	return mount(t, fmt.Sprintf("size=%d,nr_inodes=%d,mode=0755", size, inodes))
}

// mount mounts a tmpfs with opts on a new directory and returns it.
func mount(t testing.TB, opts string) string {
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
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("mount a tmpfs -o %s on %s: %v: %s", opts, dir, err, out)
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

// FillInodes takes all but leave of the free inodes of the filesystem
// holding dir with empty files in a directory of dir (.smallfs-inodes), so
// that the next files made beyond leave fail with ENOSPC.
func FillInodes(dir string, leave uint64) error {
	fill := filepath.Join(dir, ".smallfs-inodes")
	if err := os.Mkdir(fill, 0o755); err != nil {
		return err
	}
	for i := 0; ; i++ {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			return err
		}
		if st.Ffree <= leave {
			return nil
		}
		f, err := os.OpenFile(filepath.Join(fill, fmt.Sprint(i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, syscall.ENOSPC) {
			return nil
		}
		if err != nil {
			return err
		}
		f.Close()
	}
}

// MountDisk makes a block device of size bytes for one test and mounts an
// ext4 filesystem on it: a loop device over a file in a tmpfs of its own.
// The disk has a major:minor that block-I/O limits apply to, but none of
// the host disk's own load: what other programs write elsewhere cannot slow
// it down, so a test can compare the same work with and without a limit.
// Mounting needs root: the test is skipped without it. The directory is open
// to every user (a managed server's unprivileged account writes in it).
func MountDisk(t testing.TB, size int64) string {
	t.Helper()
	backing := Mount(t, size+size/8)
	img := filepath.Join(backing, "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Fatalf("attach %s to a loop device: %v", img, err)
	}
	dev := string(bytes.TrimSpace(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("detach %s: %v: %s", dev, err, out)
		}
	})
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4 %s: %v: %s", dev, err, out)
	}
	dir := filepath.Join(filepath.Dir(backing), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", dev, dir).CombinedOutput(); err != nil {
		t.Fatalf("mount %s on %s: %v: %s", dev, dir, err, out)
	}
	// Registered after the detach, so it runs first.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("unmount %s: %v: %s", dir, err, out)
		}
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
