package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"dbio/internal/analysis"
	"dbio/internal/registry"
	"dbio/internal/results"
)

// exitThresholds is the exit code of a run that ended but broke a
// --threshold, as k6 exits: a CI job tells it from a run that failed (1)
// and from bad input (2).
const exitThresholds = 99

// errThresholdsBroken is returned by a run that ended with a broken threshold.
var errThresholdsBroken = errors.New("thresholds broken")

// gateFlags are what a run is judged and remembered by once it ends:
// --threshold and --junit turn it into a CI gate, --label names it and
// --history says where it is remembered.
type gateFlags struct {
	exprs   []string
	junit   string
	labels  []string
	history string
}

func (g *gateFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&g.labels, "label", nil, "a name for the run, recorded in run.json and the history, by which dbio history and dbio check find it (repeatable), e.g. baseline or fw-2.1")
	registerHistory(fs, &g.history)
	fs.StringArrayVar(&g.exprs, "threshold", nil, "fail the command with exit code 99 when a recorded figure breaks this bound, judged when the run ends (repeatable): FIGURE[STEP]OP VALUE, e.g. 'nopm>=40000', 'new_order:p99<=50ms', 'iops[4k-randread]>=100000' (see docs/history.md)")
	fs.StringVar(&g.junit, "junit", "", "write the thresholds' verdicts to this file as JUnit XML, one test case per threshold, for CI systems")
}

// gates are the thresholds a command judges its runs by, where their
// JUnit file goes, the runs' labels and the history store they are
// recorded in ("" for none).
type gates struct {
	thresholds []results.Threshold
	junit      string
	labels     []string
	history    string
}

// resolve reads the thresholds, every problem at once, before anything runs.
func (g gateFlags) resolve(app *App) (gates, error) { return g.resolveWith(app, 0) }

// resolveWith is resolve for a command with others thresholds beside the
// flags' (a suite's [[threshold]] tables).
func (g gateFlags) resolveWith(app *App, others int) (gates, error) {
	for _, l := range g.labels {
		if err := checkLabel(l); err != nil {
			return gates{}, err
		}
	}
	ths, err := results.ParseThresholds(g.exprs)
	if err != nil {
		return gates{}, &usageError{msg: "--threshold: " + strings.ReplaceAll(err.Error(), "\n", "\n--threshold: ")}
	}
	if g.junit != "" {
		if len(ths)+others == 0 {
			return gates{}, usagef("--junit %s: writes the verdicts of --threshold; give at least one --threshold", g.junit)
		}
		if err := checkJUnitPath(g.junit); err != nil {
			return gates{}, err
		}
	}
	path, err := historyPath(app, g.history)
	if err != nil {
		return gates{}, err
	}
	return gates{thresholds: ths, junit: g.junit, labels: g.labels, history: path}, nil
}

// stepThresholds are the thresholds that name a step, which the runner
// judges as that step ends.
func (g gates) stepThresholds() []results.Threshold {
	var out []results.Threshold
	for _, t := range g.thresholds {
		if t.Step != "" {
			out = append(out, t)
		}
	}
	return out
}

// checkTxTypes refuses a threshold on a transaction type the workload does not have.
func (g gates) checkTxTypes(types []string) error {
	var problems []error
	for _, t := range g.thresholds {
		if t.TxType != "" && !slices.Contains(types, t.TxType) {
			problems = append(problems, fmt.Errorf("--threshold %q: the workload has no transaction type %q%s: name one of %s",
				t.Expr, t.TxType, registry.DidYouMean(t.TxType, types, 3), strings.Join(types, ", ")))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return usageErrors(problems)
}

// junitMarker opens every JUnit file dbio writes: a file at --junit that
// does not is someone else's and is never overwritten.
const junitMarker = `<testsuites name="dbio"`

// checkJUnitPath refuses a --junit path that holds anything but a JUnit
// file of dbio's own (a CI job's rerun overwrites its own file).
func checkJUnitPath(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Dir(path)); err != nil {
			return usagef("--junit %s: its directory does not exist", path)
		}
		return nil
	}
	if err != nil {
		return usagef("--junit %s: %v", path, err)
	}
	if !fi.Mode().IsRegular() {
		return usagef("--junit %s: is not a regular file; name a new file", path)
	}
	// Only the head is read: the marker is in it, and the path may name
	// any file of the user's, however large.
	head := make([]byte, 512)
	f, err := os.Open(path)
	if err == nil {
		var n int
		n, err = io.ReadFull(f, head)
		f.Close()
		head = head[:n]
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil || !bytes.Contains(head, []byte(junitMarker)) {
		return usagef("--junit %s: the file exists and is not a JUnit file dbio wrote; name a new file", path)
	}
	return nil
}

// judgedRun is one run's thresholds as judged.
type judgedRun struct {
	id, dir string
	judged  []results.ThresholdResult
}

// judge judges the thresholds of each finished run, records them and the
// run's labels in its run.json (before its report is written, which shows
// them), keeps the run in the history, and returns the verdicts.
func (g gates) judge(app *App, dirs ...string) []judgedRun {
	var out []judgedRun
	for _, dir := range dirs {
		l, err := results.LoadSummary(dir)
		if err != nil {
			fmt.Fprintf(app.Stdout, "warning: run %s not judged or remembered: %v\n", dir, err)
			continue
		}
		var judged []results.ThresholdResult
		if len(g.thresholds) > 0 {
			judged = analysis.JudgeThresholds(l, g.thresholds)
		}
		if len(judged)+len(g.labels) > 0 {
			if err := results.AmendRun(dir, func(r *results.Run) { r.Thresholds, r.Labels = judged, g.labels }); err != nil {
				fmt.Fprintf(app.Stdout, "warning: thresholds and labels not recorded in %s: %v\n", dir, err)
			}
		}
		rememberRun(app, g.history, dir)
		if len(g.thresholds) > 0 {
			out = append(out, judgedRun{id: l.Run.ID, dir: dir, judged: judged})
		}
	}
	return out
}

// verdict prints the judged thresholds, writes the JUnit file, and is
// errThresholdsBroken when any broke (or could not be judged).
func (g gates) verdict(app *App, runs []judgedRun) error {
	if len(g.thresholds) == 0 {
		return nil
	}
	broken, total := 0, 0
	for _, r := range runs {
		if len(runs) > 1 {
			fmt.Fprintf(app.Stdout, "thresholds of %s:\n", r.dir)
		}
		for _, j := range r.judged {
			fmt.Fprintln(app.Stdout, analysis.ThresholdLine(j))
		}
		broken += analysis.ThresholdsBroken(r.judged)
		total += len(r.judged)
	}
	if g.junit != "" {
		if err := writeJUnit(g.junit, runs); err != nil {
			fmt.Fprintf(app.Stdout, "warning: %v\n", err)
		} else {
			fmt.Fprintf(app.Stdout, "junit:   %s\n", g.junit)
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("%w: no run was recorded to judge them by", errThresholdsBroken)
	}
	if broken > 0 {
		return fmt.Errorf("%w: %d of %d", errThresholdsBroken, broken, total)
	}
	return nil
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes one test suite per run and one test case per threshold.
func writeJUnit(path string, runs []judgedRun) error {
	all := junitSuites{Name: "dbio"}
	for _, r := range runs {
		s := junitSuite{Name: "dbio thresholds of " + r.id}
		for _, j := range r.judged {
			c := junitCase{Name: strings.TrimSpace(j.Expr), ClassName: "dbio." + r.id, Output: j.Detail}
			if !j.Passed {
				c.Failure = &junitFailure{Message: j.Detail, Type: "threshold", Text: analysis.ThresholdLine(j)}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Suites = append(all.Suites, s)
	}
	b, err := xml.MarshalIndent(all, "", "  ")
	if err != nil {
		return fmt.Errorf("junit %s: %w", path, err)
	}
	if err := results.WriteFileAtomic(path, append([]byte(xml.Header), append(b, '\n')...)); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}
