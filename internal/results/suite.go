package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SuiteFile is the record a suite writes at the top of its directory: its
// plan (with the findings it expects) and how each run went.
const SuiteFile = "suite.json"

// Relation is the direction an expectation claims for run B against run A.
type Relation string

// The relations an expectation may claim.
const (
	// Lower claims B's figure is below A's (below Ratio × A's, with a ratio).
	Lower Relation = "lower"
	// Higher claims B's figure is above A's (above Ratio × A's, with a ratio).
	Higher Relation = "higher"
)

// Expectation is a finding a suite expects its runs to reproduce: that a
// figure of run B is lower or higher than the same figure of run A
// (optionally by a ratio), at the steps a selector picks. A and B name runs
// as the suite expands them, without the repetition suffix, so that every
// repeat of a run is one sample of it.
type Expectation struct {
	// Finding says the seed study's finding in words.
	Finding string `json:"finding"`
	// Figure names what is compared: a recorded figure (tpm, seconds) or a
	// figure analysis derives (cpu-iowait, latency-p99).
	Figure string `json:"figure"`
	// A is the reference run, B the run the finding is about.
	A string `json:"a"`
	B string `json:"b"`
	// Relation is B's direction against A.
	Relation Relation `json:"relation"`
	// Ratio, when set, bounds B / A: at most Ratio for lower, at least for
	// higher. Without it the claim is the direction alone.
	Ratio float64 `json:"ratio,omitempty"`
	// StepA and StepB pick the steps read on each side: "largest" (the
	// largest user count both ran), "average" (each run's mean over the
	// user counts both ran), a user count ("8"), "run" (the run's own
	// figures), or a step's kind or name ("backup" reads every backup
	// cycle, "quiet" every quiet tenant).
	StepA string `json:"step_a"`
	StepB string `json:"step_b"`
	// Floor is the relative difference beyond which one run against one
	// run is taken as more than noise (0.3 is 30 %).
	Floor float64 `json:"floor"`
	// Seed is the seed study's figure, as the study reported it.
	Seed string `json:"seed,omitempty"`
}

// Suite is a suite directory read back: the suite's name and description,
// what it expects, and its runs.
type Suite struct {
	Path        string
	Name        string
	Description string
	Expect      []Expectation
	Runs        []SuiteRun
	// Sequential are the comparisons the suite ran until decided, each
	// with every look its sequential test took.
	Sequential []SuiteSequential
}

// SuiteSequential is a comparison a suite ran until decided: its group,
// its two variants (A first, in plan order) and what the sequential test
// saw at each look and decided.
type SuiteSequential struct {
	Group string `json:"group"`
	A     string `json:"a"`
	B     string `json:"b"`
	ABSequential
}

// SuiteRun is one run of a suite as suite.json records it.
type SuiteRun struct {
	// Name is the run's name; Base is the name its repetitions share
	// (the name without "-r2"), which expectations use.
	Name string
	Base string
	Rep  int
	Kind string
	// Dir is the run's results directory (inside the suite's), "" when
	// the run never started one.
	Dir    string
	Status Status
	Error  string
}

// suiteJSON is the part of suite.json a reader needs; the runner writes the
// whole plan beside it.
type suiteJSON struct {
	Plan struct {
		Name        string        `json:"name"`
		Description string        `json:"description"`
		Expect      []Expectation `json:"expect"`
		Runs        []struct {
			Name string `json:"name"`
			Base string `json:"base"`
			Rep  int    `json:"rep"`
			Kind string `json:"kind"`
		} `json:"runs"`
	} `json:"plan"`
	Outcome struct {
		Runs []struct {
			Name   string `json:"name"`
			Dir    string `json:"dir"`
			Status Status `json:"status"`
			Error  string `json:"error"`
		} `json:"runs"`
		Sequential []SuiteSequential `json:"sequential"`
	} `json:"outcome"`
}

// LoadSuite reads a suite directory's suite.json. A run's directory is
// recorded relative to the suite's, so that a suite directory moved or
// copied elsewhere reads the same. A recorded directory is only ever read
// inside the suite's: one that would leave it ("../x") or reach it through
// a link is refused with an error wrapping ErrUntrusted.
func LoadSuite(dir string) (*Suite, error) {
	var j suiteJSON
	if err := readJSONIn(dir, SuiteFile, &j); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notResults(dir, "suite directory", SuiteFile)
		}
		return nil, err
	}
	s := &Suite{Path: dir, Name: j.Plan.Name, Description: j.Plan.Description, Expect: j.Plan.Expect, Sequential: j.Outcome.Sequential}
	for i, p := range j.Plan.Runs {
		r := SuiteRun{Name: p.Name, Base: p.Base, Rep: p.Rep, Kind: p.Kind}
		if r.Base == "" {
			r.Base = r.Name
		}
		// The outcome lists the runs that started, in the plan's order.
		if i < len(j.Outcome.Runs) && j.Outcome.Runs[i].Name == p.Name {
			o := j.Outcome.Runs[i]
			r.Status, r.Error = o.Status, o.Error
			if o.Dir != "" {
				d, err := runDir(dir, o.Dir)
				if err != nil {
					return nil, fmt.Errorf("%s: run %s: %w", filepath.Join(dir, SuiteFile), r.Name, err)
				}
				r.Dir = d
			}
		}
		s.Runs = append(s.Runs, r)
	}
	return s, nil
}

// runDir is where a run recorded as recorded lies in the suite directory
// dir: recorded relative to the suite (as dbio records it), or else found
// by inSuite. A path with ".." in it is refused: dbio never wrote one.
func runDir(dir, recorded string) (string, error) {
	if filepath.IsLocal(recorded) {
		p, err := Within(dir, recorded)
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(p); err == nil {
			return p, nil
		}
	} else if !filepath.IsAbs(recorded) {
		return "", leaves(dir, recorded)
	}
	return inSuite(dir, recorded)
}

// inSuite finds a run's directory, recorded as given (absolute, or relative
// to where dbio ran) by suites written before dbio recorded it relative to
// the suite, inside the suite directory dir, wherever that is now: a run's
// directory is a child of the suite's, or a grandchild when it is one
// repetition in a repeat set, so the recorded path's last one or two
// elements name it there. The path itself is never read.
func inSuite(dir, recorded string) (string, error) {
	recorded = filepath.Clean(recorded)
	base, parent := filepath.Base(recorded), filepath.Base(filepath.Dir(recorded))
	if !filepath.IsLocal(base) {
		return "", leaves(dir, recorded)
	}
	candidates := []string{base}
	if filepath.IsLocal(parent) {
		candidates = append(candidates, filepath.Join(parent, base))
	}
	for _, c := range candidates {
		p, err := Within(dir, c)
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(p); err == nil {
			return p, nil
		}
	}
	return filepath.Join(dir, base), nil
}

// Repeats loads the results directories of every run whose base name is
// base, in the plan's order (its repetitions), leaving out those that
// never started one or cannot be read.
func (s *Suite) Repeats(base string) []*Loaded {
	var out []*Loaded
	for _, r := range s.Runs {
		if r.Base != base || r.Dir == "" {
			continue
		}
		if l, err := LoadSummary(r.Dir); err == nil {
			out = append(out, l)
		}
	}
	return out
}
