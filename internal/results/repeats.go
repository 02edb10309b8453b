package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RepeatSetFile is the manifest of a repeat set: the directory that holds
// the results directories of one run repeated N times (--repeat N, or a
// suite entry's repeat = N), each a results directory of its own.
const RepeatSetFile = "repeats.json"

// RepeatSet is a repeat set's manifest: what was repeated, how many times,
// and the repeats' results directories in the order they ran.
type RepeatSet struct {
	SchemaVersion int `json:"schema_version"`
	// Name is the set's name (the runs' name without their repeat number).
	Name string `json:"name"`
	// Kind is the repeated runs' kind ("tpcc").
	Kind string `json:"kind"`
	// Label, when set, names the configuration the set is one side of
	// (a suite's variant, "data=nvme").
	Label   string   `json:"label,omitempty"`
	Command []string `json:"command,omitempty"`
	// Repeats is how many repeats were planned, Ran how many were started
	// (the runs below). A set cut short, Ran below Repeats, says why in
	// CutShort: it was interrupted, a repeat failed, or (in a suite run
	// until decided) its comparison had decided before the rest were
	// needed; the counts alone would not tell a study that stopped on
	// purpose from one that broke.
	Repeats  int    `json:"repeats"`
	Ran      int    `json:"ran"`
	CutShort string `json:"cut_short,omitempty"`
	// Runs are the repeats' results directories relative to the set's
	// directory, in the order they ran (every run that was started).
	Runs    []string  `json:"runs"`
	Status  Status    `json:"status"`
	Error   string    `json:"error,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
}

// RepeatSetDir is a repeat set being written.
type RepeatSetDir struct {
	Path string
	set  RepeatSet
	// decided, when set, is why the set needs no more repeats: its
	// comparison has decided.
	decided string
}

// CreateRepeatSet makes the directory <base>/<timestamp>-<name> for a repeat
// set and writes its manifest, running and without runs yet.
func CreateRepeatSet(base string, set RepeatSet, now time.Time) (*RepeatSetDir, error) {
	path, err := NewDir(base, set.Name, "repeat set directory", now)
	if err != nil {
		return nil, err
	}
	return OpenRepeatSet(path, set, now)
}

// OpenRepeatSet writes a new repeat set's manifest into an existing
// directory that holds none yet (a suite's variant directory).
func OpenRepeatSet(path string, set RepeatSet, now time.Time) (*RepeatSetDir, error) {
	if IsRepeatSet(path) {
		return nil, fmt.Errorf("%s already holds a repeat set", path)
	}
	set.SchemaVersion = SchemaVersion
	set.Status = StatusRunning
	if set.Started.IsZero() {
		set.Started = now
	}
	if set.Runs == nil {
		set.Runs = []string{}
	}
	d := &RepeatSetDir{Path: path, set: set}
	if err := d.write(); err != nil {
		return nil, err
	}
	return d, nil
}

// Add records a repeat's results directory (inside the set's directory).
func (d *RepeatSetDir) Add(runDir string) error {
	rel, err := filepath.Rel(d.Path, runDir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("repeat %s is not inside its set %s", runDir, d.Path)
	}
	d.set.Runs = append(d.set.Runs, filepath.ToSlash(rel))
	d.set.Ran = len(d.set.Runs)
	return d.write()
}

// Decided records that the set's comparison has decided (why: the
// verdict and when), so that the repeats it then skips are said to be
// skipped on purpose when the set finishes short.
func (d *RepeatSetDir) Decided(why string) { d.decided = why }

// Finish records how the set ended and, when fewer repeats ran than were
// planned, why.
func (d *RepeatSetDir) Finish(status Status, runErr error, now time.Time) error {
	d.set.Status, d.set.Ended = status, now
	if runErr != nil {
		d.set.Error = runErr.Error()
	}
	if d.set.Ran < d.set.Repeats {
		stopped := fmt.Sprintf("%d of %d planned repeats ran", d.set.Ran, d.set.Repeats)
		switch {
		case status == StatusInterrupted:
			d.set.CutShort = stopped + ": interrupted"
		case status == StatusFailed:
			d.set.CutShort = stopped + ": a repeat failed"
		case d.decided != "":
			d.set.CutShort = stopped + ": " + d.decided
		default:
			d.set.CutShort = stopped
		}
	}
	return d.write()
}

// Set is the manifest as written so far.
func (d *RepeatSetDir) Set() RepeatSet { return d.set }

func (d *RepeatSetDir) write() error {
	return WriteJSON(filepath.Join(d.Path, RepeatSetFile), d.set)
}

// IsRepeatSet says whether dir holds a repeat set's manifest (or
// something in its place, which ReadRepeatSet refuses).
func IsRepeatSet(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, RepeatSetFile))
	return err == nil
}

// ReadRepeatSet reads a repeat set's manifest. Its repeats must lie inside
// the set's directory, reached without a link: a manifest that names
// another place ("../x", an absolute path) is refused with an error
// wrapping ErrUntrusted.
func ReadRepeatSet(dir string) (RepeatSet, error) {
	var set RepeatSet
	if err := readJSONIn(dir, RepeatSetFile, &set); err != nil {
		return set, err
	}
	if set.SchemaVersion > SchemaVersion {
		return set, fmt.Errorf("%s: schema version %d is newer than this dbio reads (%d): upgrade dbio", filepath.Join(dir, RepeatSetFile), set.SchemaVersion, SchemaVersion)
	}
	for _, r := range set.Runs {
		if _, err := Within(dir, filepath.FromSlash(r)); err != nil {
			return set, fmt.Errorf("%s: %w", filepath.Join(dir, RepeatSetFile), err)
		}
	}
	return set, nil
}

// RunDirs are the repeats' results directories, as paths.
func (s RepeatSet) RunDirs(dir string) []string {
	out := make([]string, len(s.Runs))
	for i, r := range s.Runs {
		out[i] = filepath.Join(dir, filepath.FromSlash(r))
	}
	return out
}

// LoadRepeatSet reads a repeat set's manifest and loads its repeats.
func LoadRepeatSet(dir string) (RepeatSet, []*Loaded, error) {
	set, err := ReadRepeatSet(dir)
	if err != nil {
		return set, nil, err
	}
	if len(set.Runs) == 0 {
		return set, nil, fmt.Errorf("repeat set %s has no run yet", dir)
	}
	runs, err := LoadAll(set.RunDirs(dir))
	return set, runs, err
}
