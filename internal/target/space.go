package target

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"dbio/internal/units"
)

// Need is space a run will take on the filesystem of Path.
type Need struct {
	Path string
	// Bytes is what the run will write there.
	Bytes uint64
	// Reclaim is what the run will first remove there: files of an earlier
	// run that dbio made and will replace. It counts as free.
	Reclaim uint64
	// What the space is for, as the refusal names it ("TPC-C at this scale").
	What string
}

// FilesPerNeed are the inodes (files and directories) each need counts
// beside its bytes. It is one figure for every need, kept simple: more
// than the largest thing a run makes in one place (a managed PostgreSQL's
// fresh data directory holds about a thousand files; a results directory
// takes some fifteen per step and a dozen besides; SQLite's database is
// four files and fio's working file one), so that a filesystem with fewer
// free inodes than its needs' count is refused before the run fails there.
const FilesPerNeed = 1024

// LowInodes is the number of free inodes under which a filesystem's free
// inodes are shown beside its free space: a few runs' worth.
const LowInodes = 8 * FilesPerNeed

// free is what statfs says is left on a filesystem to an unprivileged
// writer: bytes and inodes, inodes counted only where the filesystem
// counts them (btrfs, for one, does not: it makes them as it needs them).
type free struct {
	bytes        uint64
	inodes       uint64
	countsInodes bool
}

func freeOn(st *syscall.Statfs_t) free {
	return free{bytes: st.Bavail * uint64(st.Bsize), inodes: st.Ffree, countsInodes: st.Files > 0}
}

// FreeInodesIfLow is the number of free inodes on the filesystem of path
// when it is below LowInodes, for the run's header and report; nil when
// there are more, or the filesystem does not count them.
func FreeInodesIfLow(path string) *uint64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return nil
	}
	if f := freeOn(&st); f.countsInodes && f.inodes < LowInodes {
		return &f.inodes
	}
	return nil
}

// SpaceProblems checks needs against free space and free inodes, adding up
// the needs of paths that share a filesystem (the data target and the
// results on one disk), and returns one problem per filesystem and lack
// (bytes, inodes). Paths that do not exist yet are counted on the
// filesystem that would hold them. Each need counts FilesPerNeed inodes.
func SpaceProblems(needs []Need) []error {
	type fsNeed struct {
		free          free
		need, reclaim uint64
		files         uint64
		paths, whats  []string
	}
	byDev := map[uint64]*fsNeed{}
	var order []uint64
	var problems []error
	for _, n := range needs {
		if n.Bytes == 0 {
			continue
		}
		at := n.Path
		if _, err := os.Stat(at); errors.Is(err, os.ErrNotExist) {
			p, _, err := existingParent(at)
			if err != nil {
				continue // Inspect reports the path itself
			}
			at = p
		}
		var st syscall.Statfs_t
		var sst syscall.Stat_t
		if syscall.Statfs(at, &st) != nil || syscall.Stat(at, &sst) != nil {
			continue
		}
		dev := uint64(sst.Dev)
		f, ok := byDev[dev]
		if !ok {
			f = &fsNeed{free: freeOn(&st)}
			byDev[dev] = f
			order = append(order, dev)
		}
		f.need += n.Bytes
		f.reclaim += n.Reclaim
		f.files += FilesPerNeed
		shown := n.Path
		if abs, err := filepath.Abs(n.Path); err == nil {
			shown = abs
		}
		if !contains(f.paths, shown) {
			f.paths = append(f.paths, shown)
		}
		f.whats = append(f.whats, n.What)
	}
	for _, dev := range order {
		f := byDev[dev]
		where := "target " + f.paths[0]
		if len(f.paths) > 1 {
			where = "the filesystem of " + strings.Join(f.paths, " and ")
		}
		verb := "needs"
		if len(f.whats) > 1 {
			verb = "together need"
		}
		if f.free.bytes+f.reclaim < f.need {
			free := units.FormatBytes(f.free.bytes)
			if f.reclaim > 0 {
				free += fmt.Sprintf(" (plus %s of dbio's earlier files it replaces)", units.FormatBytes(f.reclaim))
			}
			problems = append(problems, fmt.Errorf("%s has %s free but %s %s about %s: free some space, choose a larger target, or reduce the scale",
				where, free, strings.Join(f.whats, " and "), verb, units.FormatBytes(f.need)))
		}
		// A fresh run's replaced files free inodes too, but it makes as
		// many again: they are not counted as free.
		if f.free.countsInodes && f.free.inodes < f.files {
			problems = append(problems, inodeProblem(where, f.free.inodes, f.files, strings.Join(f.whats, " and ")+" "+verb))
		}
	}
	return problems
}

// inodeProblem says that where has fewer free inodes than need, for what.
func inodeProblem(where string, have, need uint64, what string) error {
	return fmt.Errorf("%s has %d free inodes (the files and directories it can still hold, whatever its free space) but %s about %d (%d counted for each): remove files there, choose another target, or give its filesystem more inodes (mkfs.ext4 -N, tmpfs -o nr_inodes)",
		where, have, what, need, FilesPerNeed)
}
