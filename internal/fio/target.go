package fio

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"dbio/internal/results"
	"dbio/internal/units"
)

// A target is prepared for a run the same way wherever it is: fio's
// directory made in dbio's directory there, an ioengine and O_DIRECT
// setting found that fio can use, the working file sized by one rule, laid
// out once (or reused, or laid out again when a purge left holes in it),
// purged for a profile that asks, and all of it recorded in run.json. A
// machine does each of those things on this machine or on a host over
// ssh; prepareTarget says what is done, once.

// machine is where a target's working file is prepared: this machine, or
// a host of a fleet over ssh.
type machine interface {
	// workDir makes fio's directory in dbio's directory on the target at
	// path (on a host, holding the target for the run first) and refuses
	// links planted where dbio's files go. info is what run.json records
	// of the target; its Path names the target in messages.
	workDir(ctx context.Context, path string) (dir string, info results.TargetInfo, warnings []string, err error)
	// space is what the working file's size is drawn from.
	space(ctx context.Context, path, file string) (space, error)
	// tryEngine reads 1 MiB of file with fio's engine and O_DIRECT setting
	// and removes it; why is fio's complaint, empty when fio could.
	tryEngine(ctx context.Context, file, engine string, direct bool) (why string, err error)
	// remove removes a working file dbio laid out.
	remove(ctx context.Context, file string) error
	// layout writes the working file once, sequentially, under a temporary
	// name renamed when complete, so that an interrupted layout is never
	// reused.
	layout(ctx context.Context, pl placement) error
	// purge deallocates every block of the working file, keeping its size,
	// and says what it did.
	purge(ctx context.Context, file string, size int64) (string, error)
}

// space is what a working file's size is drawn from: the target's free
// space and file system, the machine's memory, and the working file an
// earlier run left (existing is -1 without one).
type space struct {
	free      uint64
	fsType    string
	memory    uint64
	existing  int64
	allocated int64
}

// WorkSubdir is fio's directory in dbio's directory on a target; workFile
// is the working file in it, probeFile the small file the engine probe
// reads.
const (
	WorkSubdir = "fio"
	workFile   = "work.dat"
	probeFile  = "probe.dat"
)

// prepareTarget prepares the target at path on s for the run, as the
// target name and label plan it.
func (r *runner) prepareTarget(ctx context.Context, s *site, path, name, label string) (placement, error) {
	m := s.machine
	dir, info, warnings, err := m.workDir(ctx, path)
	if err != nil {
		return placement{}, err
	}
	where := info.Path
	pl := placement{Target: name, Label: label, File: filepath.Join(dir, workFile)}
	sp, err := m.space(ctx, path, pl.File)
	if err != nil {
		return placement{}, fmt.Errorf("target %s: %w", where, err)
	}
	if pl.Engine, pl.Direct, err = r.probe(ctx, m, dir, sp.fsType, func(w string) { warnings = append(warnings, s.on(w)) }); err != nil {
		return placement{}, fmt.Errorf("target %s: %w", where, err)
	}
	info.FreeBytes = sp.free
	free, existing := sp.free, sp.existing
	var notes []string
	note := func(text string) { notes = append(notes, fmt.Sprintf("%s: %s", where, text)) }
	pl.Size = r.plan.Config.Size
	if pl.Size == 0 {
		size, why, err := DefaultSize(sp.memory, free+uint64(max(existing, 0)), sp.fsType)
		if err != nil {
			return placement{}, fmt.Errorf("target %s: %w", where, err)
		}
		pl.Size = size
		note(why)
	}
	if existing == pl.Size && sp.allocated < pl.Size {
		// A purge whose fill did not finish left holes, which read as zeros
		// without touching the device: lay the file out again.
		note(fmt.Sprintf("the working file %s had unallocated blocks (a purge not followed by its fill): laid out again", pl.File))
		if err := m.remove(ctx, pl.File); err != nil {
			return placement{}, fmt.Errorf("target %s: replace working file: %w", where, err)
		}
		existing, free = -1, free+uint64(max(sp.allocated, 0))
	}
	if existing == pl.Size {
		note(fmt.Sprintf("reused the working file %s (%s) laid out by an earlier run", pl.File, units.FormatBytes(uint64(pl.Size))))
	} else {
		if existing >= 0 {
			// Our own file of another size: replaced, never grown in place,
			// so that no part of it is a sparse hole.
			if err := m.remove(ctx, pl.File); err != nil {
				return placement{}, fmt.Errorf("target %s: replace working file: %w", where, err)
			}
			free += uint64(existing)
		}
		if uint64(pl.Size) > free {
			return placement{}, fmt.Errorf("target %s has %s free but the fio working file needs %s: free some space, choose another target, or pass a smaller --size",
				where, units.FormatBytes(free), units.FormatBytes(uint64(pl.Size)))
		}
		laid, err := r.layout(ctx, s, pl)
		if err != nil {
			return placement{}, fmt.Errorf("target %s: %w", where, err)
		}
		note(laid)
	}
	if _, ok := r.plan.Profile.(purger); ok {
		purged, err := m.purge(ctx, pl.File, pl.Size)
		if err != nil {
			return placement{}, fmt.Errorf("target %s: %w", where, err)
		}
		r.say("%s", s.on(purged))
		note(purged)
	}
	err = r.sink.UpdateRun(func(run *results.Run) {
		run.Environment.Targets = append(run.Environment.Targets, info)
		run.Warnings = append(run.Warnings, warnings...)
		run.Notes = append(run.Notes, notes...)
	})
	for _, w := range warnings {
		r.say("warning: %s", w)
	}
	return pl, err
}

// layout lays the working file out on s, saying how long it took.
func (r *runner) layout(ctx context.Context, s *site, pl placement) (string, error) {
	r.say("%s", s.on(fmt.Sprintf("laying out the %s working file %s ...", units.FormatBytes(uint64(pl.Size)), pl.File)))
	start := r.now()
	if err := s.machine.layout(ctx, pl); err != nil {
		return "", err
	}
	took := r.now().Sub(start)
	rate := float64(pl.Size) / took.Seconds() / 1e6
	r.say("  done in %.1f s (%.0f MB/s)", took.Seconds(), rate)
	return fmt.Sprintf("laid out the working file %s (%s) in %.1f s (%.0f MB/s, 1m sequential writes)", pl.File, units.FormatBytes(uint64(pl.Size)), took.Seconds(), rate), nil
}

// probe finds an engine and O_DIRECT setting fio can use in dir on m: the
// asked engine (io_uring by default), then libaio, then psync; with
// O_DIRECT if the filesystem takes it, else buffered. Every fallback is a
// warning, given to warn.
func (r *runner) probe(ctx context.Context, m machine, dir, fsType string, warn func(string)) (engine string, direct bool, err error) {
	want := r.plan.Config.Engine
	if want == "" {
		want = "io_uring"
	}
	candidates := []string{want}
	for _, e := range []string{"io_uring", "libaio", "psync"} {
		if e != want {
			candidates = append(candidates, e)
		}
	}
	file := filepath.Join(dir, probeFile)
	failures := map[string]string{}
	for _, d := range []bool{true, false} {
		for _, e := range candidates {
			why, err := m.tryEngine(ctx, file, e, d)
			if err != nil {
				return "", false, err
			}
			if why != "" {
				failures[fmt.Sprintf("%s/direct=%d", e, boolInt(d))] = why
				continue
			}
			if e != want {
				warn(fmt.Sprintf("ioengine %s is not usable here (fio: %s); using %s instead",
					want, failures[fmt.Sprintf("%s/direct=%d", want, boolInt(d))], e))
			}
			if !d {
				warn(fmt.Sprintf("%s (%s) refuses O_DIRECT (fio: %s): buffered I/O, so figures include page-cache effects",
					dir, fsType, failures[fmt.Sprintf("%s/direct=1", e)]))
			}
			if e == "psync" {
				warn("with the psync engine each job has one I/O in flight: queue depths above 1 are not reached")
			}
			return e, d, nil
		}
	}
	var all []string
	for k, v := range failures {
		all = append(all, k+": "+v)
	}
	return "", false, fmt.Errorf("fio cannot do I/O in %s with any engine (%s)", dir, strings.Join(all, "; "))
}

// probeArgs are fio's arguments for the engine probe's 1 MiB read of file.
func probeArgs(file, engine string, direct bool) []string {
	return []string{"--name=probe", "--filename=" + escapeFilename(file), "--size=1m", "--bs=4k", "--rw=read",
		"--ioengine=" + engine, fmt.Sprintf("--direct=%d", boolInt(direct)), "--output-format=json"}
}

// layoutArgs are fio's arguments for laying out a working file of size
// bytes at file, sequentially.
func layoutArgs(file string, size int64, engine string, direct bool) []string {
	return []string{"--name=layout", "--filename=" + escapeFilename(file), fmt.Sprintf("--size=%d", size), "--rw=write", "--bs=1m",
		"--iodepth=8", "--ioengine=" + engine, fmt.Sprintf("--direct=%d", boolInt(direct)), "--end_fsync=1", "--output-format=json"}
}

// partialFile is where a working file is laid out until it is complete.
func partialFile(file string) string { return file + ".partial" }
