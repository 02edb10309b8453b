package target

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"dbio/internal/results"
)

// Inspection is what Inspect found at a target path. Nothing was written to find it.
type Inspection struct {
	// Path is the target, absolute.
	Path string
	// Exists is false for a path --create-target would create; the other
	// fields then describe the nearest directory above it that exists.
	Exists bool
	// Dev identifies the filesystem: paths with one Dev share their free space.
	Dev uint64
	// FreeBytes is the space available to an unprivileged writer.
	FreeBytes uint64
	// Storage is the mount and block devices behind the path, when they resolve.
	Storage results.Storage
}

// Inspect looks at path as a place dbio would work in, without writing
// anything, and returns every reason it cannot be one: empty, missing (unless
// mayCreate), a file or device node, a read-only filesystem, not writable by
// this user, or a <path>/dbio that is a link or a directory dbio did not make.
// With mayCreate a missing path is accepted when the nearest existing
// directory above it could hold it. sys resolves the storage behind it.
func Inspect(sys SysFS, path string, mayCreate bool) (Inspection, []error) {
	in, problems := InspectDir(sys, "target", path, mayCreate)
	if in.Exists && len(problems) == 0 {
		if err := CheckOwned(filepath.Join(in.Path, DirName)); err != nil {
			problems = append(problems, err)
		}
	}
	return in, problems
}

// InspectDir is Inspect for any directory dbio will write in (noun names it
// in the problems, e.g. "results directory"), without the look at dbio's own
// subdirectory.
func InspectDir(sys SysFS, noun, path string, mayCreate bool) (Inspection, []error) {
	var in Inspection
	if strings.TrimSpace(path) == "" {
		return in, []error{fmt.Errorf("%s path is empty: pass --%s DIR", noun, strings.Fields(noun)[0])}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return in, []error{fmt.Errorf("%s %q: %w", noun, path, err)}
	}
	in.Path = abs
	at := abs
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		if !mayCreate {
			return in, []error{notExist(abs)}
		}
		if at, fi, err = existingParent(abs); err != nil {
			return in, []error{fmt.Errorf("%s %s cannot be created: %w", noun, abs, err)}
		}
	case err != nil:
		return in, []error{fmt.Errorf("%s %s: %w", noun, abs, err)}
	default:
		in.Exists = true
	}
	what := noun + " " + abs
	if !in.Exists {
		what = fmt.Sprintf("%s %s cannot be created: %s", noun, abs, at)
	}
	switch {
	case fi.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0:
		return in, []error{fmt.Errorf("%s is a device node: dbio works on a directory of a mounted filesystem; mount the device and pass its mount point", what)}
	case !fi.IsDir():
		return in, []error{fmt.Errorf("%s is not a directory: pass the directory dbio may work in", what)}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(at, &st); err != nil {
		return in, []error{fmt.Errorf("%s: statfs: %w", what, err)}
	}
	in.FreeBytes = st.Bavail * uint64(st.Bsize)
	var sst syscall.Stat_t
	if err := syscall.Stat(at, &sst); err == nil {
		in.Dev = uint64(sst.Dev)
	}
	in.Storage, _ = sys.Resolve(at)
	switch {
	case st.Flags&stRdonly != 0:
		return in, []error{fmt.Errorf("%s is on a read-only filesystem (%s): choose a directory on a filesystem mounted read-write", what, mountOf(in.Storage, at))}
	case syscall.Access(at, wOK|xOK) != nil:
		return in, []error{fmt.Errorf("%s is not writable by this user (uid %d): choose a directory you can write to, or give this user write permission on it", what, os.Getuid())}
	}
	return in, nil
}

// Constants of statfs(2) and access(2) that package syscall does not name.
const (
	stRdonly = 0x1 // ST_RDONLY in f_flags
	wOK      = 0x2 // W_OK
	xOK      = 0x1 // X_OK
)

func mountOf(s results.Storage, path string) string {
	if s.MountPoint != "" {
		return "mounted at " + s.MountPoint
	}
	return path
}

// existingParent climbs from a missing path to the nearest directory entry that exists.
func existingParent(abs string) (string, os.FileInfo, error) {
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			return p, fi, nil
		}
		if !(errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) || p == filepath.Dir(p) {
			return "", nil, err
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// allocated is the space a file takes on its filesystem (what removing it
// frees), not its length: a sparse or preallocated file differs.
func allocated(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Blocks) * 512
	}
	return uint64(fi.Size())
}

// OwnedBytes is the space taken by the regular files at the given paths inside
// dbio's directory of the target at path (each relative to <path>/dbio, a
// file or a directory walked without following links), counting only what
// lies in directories dbio marked as its own: what a fresh run may remove
// and so what its space check may count as free.
func OwnedBytes(path string, rels ...string) uint64 {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0
	}
	dir := filepath.Join(abs, DirName)
	if checkOwned(dir) != nil {
		return 0
	}
	var total uint64
	seen := map[string]bool{}
	for _, rel := range rels {
		p := filepath.Join(dir, rel)
		if seen[p] || !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			continue
		}
		seen[p] = true
		// The first component below dbio/ must be one of dbio's marked directories.
		first := strings.SplitN(strings.TrimPrefix(p, dir+string(filepath.Separator)), string(filepath.Separator), 2)[0]
		if checkOwned(filepath.Join(dir, first)) != nil {
			continue
		}
		filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					total += allocated(fi)
				}
			}
			return nil
		})
	}
	return total
}
