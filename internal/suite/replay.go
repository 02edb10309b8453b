package suite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The kinds of workload that are not a registered database workload: a
// fio pass (disk), and a capture's block I/O played with fio (replay).
const (
	KindDisk   = "disk"
	KindReplay = "replay"
)

// Paces a replay may take: each request at its recorded time (scaled by
// speed), or as fast as the recorded order and concurrency allow. They
// are `dbio replay --pace`'s words.
const (
	PaceRecorded = "recorded"
	PaceMax      = "max"
)

// maxSpeed bounds a replay's speed, as --speed is bounded.
const maxSpeed = 1000

// checkReplay checks a replay's table and resolves its capture against
// the suite file's directory, returning the workload as the runs take it.
// The capture's path follows the rule of every path a results directory
// records: a relative one stays inside the suite file's directory and
// passes through no symbolic link there; an absolute one is the user's
// own, and whatever reads the capture follows no link inside it. Whether
// the directory holds a capture is the capture reader's to say.
func (v *validator) checkReplay(table string, w WorkloadDef) WorkloadDef {
	for _, k := range []struct {
		key   string
		given bool
	}{
		{"users", w.Users != nil}, {w.rampKey, w.RampTime != ""}, {w.runtimeKey, w.Runtime != ""},
		{"ramp_until", w.RampUpUntil != ""}, {"steady_window", w.SteadyWindow != ""}, {"steady_ramp", w.SteadyRamp != ""},
		{"precision", w.Precision != ""}, {"precision_min", w.PrecisionMin != ""},
		{"rate", w.Rate != 0}, {"rate_per_user", w.RatePerUser != 0}, {"arrival", w.Arrival != ""}, {"late_tolerance", w.LateTolerance != ""},
		{"goal", w.Goal != ""}, {"goal_max", w.GoalMax != 0}, {"goal_resolution", w.GoalResolution != ""}, {"goal_probes", w.GoalProbes != 0}, {"goal_confirm", w.GoalConfirm},
	} {
		if k.given {
			v.addf(table, k.key, "a replay issues its capture's requests as they were recorded and lasts as long as they take: drop %s (pace and speed set how fast it plays)", k.key)
		}
	}
	switch w.Pace {
	case "":
		w.Pace = PaceRecorded
	case PaceRecorded, PaceMax:
	default:
		v.addf(table, "pace", "%q: use %q (each request at its recorded time) or %q (as fast as order and concurrency allow)%s", w.Pace, PaceRecorded, PaceMax, closest(w.Pace, []string{PaceRecorded, PaceMax}))
	}
	switch {
	case w.Speed == 0:
		if w.Pace == PaceRecorded {
			w.Speed = 1
		}
	case w.Pace == PaceMax:
		v.addf(table, "speed", "scales the recorded pace, and pace = \"max\" has none: drop speed, or use pace = \"recorded\"")
	case w.Speed < 0 || w.Speed > maxSpeed:
		v.addf(table, "speed", "%g: give a number above 0 and at most %d (1 is the recorded pace, 2 twice as fast)", w.Speed, maxSpeed)
	}
	if strings.TrimSpace(w.CaptureDir) == "" {
		v.addf(table, "capture", "a replay needs the capture to play: the directory dbio capture wrote, e.g. capture = \"captures/pg-tpcc\" (relative to the suite file's directory)")
		return w
	}
	dir, err := v.capturePath(w.CaptureDir)
	if err != nil {
		v.addf(table, "capture", "%v", err)
		return w
	}
	w.CaptureDir = dir
	return w
}

// capturePath is where a replay's capture is: an absolute path as given,
// a relative one inside the suite file's directory, reached without a link.
func (v *validator) capturePath(capture string) (string, error) {
	base := filepath.Dir(v.file)
	path := capture
	if !filepath.IsAbs(capture) {
		if !filepath.IsLocal(capture) {
			return "", fmt.Errorf("%q leaves the suite file's directory %s: a relative capture path is read inside it; give the capture's absolute path instead", capture, base)
		}
		path = filepath.Join(base, capture)
		// No element below the suite's directory may be a link: it could
		// lead anywhere, and the suite would read there unseen.
		p := base
		for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(capture)), "/") {
			p = filepath.Join(p, part)
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				break // said below
			}
			if err != nil {
				return "", err
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return "", fmt.Errorf("%s is a symbolic link: a relative capture path is read inside the suite file's directory without following a link; give the capture's absolute path instead", p)
			}
		}
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		where := ""
		if !filepath.IsAbs(capture) {
			where = " (relative to the suite file's directory " + base + ")"
		}
		return "", errors.New(path + " does not exist" + where + ": give the directory dbio capture wrote, e.g. examples/captures/pg-tpcc as captures/pg-tpcc from a suite in examples/")
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", errors.New(path + " is not a directory: give the results directory dbio capture wrote")
	}
	return path, nil
}

// replayRunProblems are what a run of a replay workload cannot take: a
// replay starts no database and runs on this machine.
func (v *validator) replayRunProblems(table string, r RunDef, engines []string, log, backup *Target) {
	drop := func(key, what string) {
		v.addf(table, key, "a replay starts no database and plays its capture on its data target alone: drop %s", what)
	}
	switch {
	case len(engines) > 0:
		drop("engine", "engine")
	case r.BufferPool != nil:
		drop("buffer_pool", "buffer_pool")
	case r.ServerMemory != nil:
		drop("server_memory", "server_memory")
	}
	if log != nil {
		drop("log", "log")
	}
	if backup != nil {
		drop("backup", "backup")
	}
	if r.Scenario != "" {
		drop("scenario", "the scenario")
	}
	if r.Capture {
		drop("capture", "capture (the replay's own I/O is fio's)")
	}
}
