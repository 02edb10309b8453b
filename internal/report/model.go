package report

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// The report reads a results directory through the results contract and
// nothing else; what it shows of it comes from internal/analysis.

// runView is one results directory as the report sees it: its steps sorted
// by what they measured, and the name it goes by.
type runView struct {
	*analysis.Recorded
	// Letter names the run in a comparison ("A", "B"); empty alone.
	Letter string
	// Name is a short, distinguishing name (see nameRuns).
	Name string
	// opts name workload kinds in headings (Options.Titles).
	opts Options
}

// verdictHead is the verdict's first clause ("I/O bound"), "" without one.
func verdictHead(t *results.TelemetrySummary) string {
	if t == nil || t.Verdict.Text == "" {
		return ""
	}
	return t.Verdict.Head()
}

// pattern names the access pattern for a reader: "random read", "70 % read random mix".
func pattern(d results.FioPlan) string {
	switch d.RW {
	case "randread":
		return "random read"
	case "randwrite":
		return "random write"
	case "read":
		return "sequential read"
	case "write":
		return "sequential write"
	case "randrw":
		return fmt.Sprintf("random %d/%d mix", d.ReadPct, 100-d.ReadPct)
	case "rw":
		return fmt.Sprintf("sequential %d/%d mix", d.ReadPct, 100-d.ReadPct)
	}
	return d.RW
}

// newRunView sorts a loaded results directory's steps.
func newRunView(l *results.Loaded) *runView {
	return &runView{Recorded: analysis.NewRecorded(l)}
}

// title names a workload kind for headings: the registered workload's
// title, else the kind itself.
func (r *runView) title(kind string) string { return r.opts.title(kind) }

// seconds converts an instant to seconds since the run started, the x of
// every timeline (series.csv's elapsed_s).
func (r *runView) seconds(s results.Step) (start, measure, end float64) {
	start = s.Started.Sub(r.Run.Started).Seconds()
	end = s.Ended.Sub(r.Run.Started).Seconds()
	return start, start + s.RampUpS, end
}

// timeline is the per-second rows of some steps.
type timeline struct {
	X      []float64 // seconds since the run started
	Values map[string][]float64
}

// timeline extracts the named columns of the rows that belong to steps.
func (r *runView) timeline(steps []results.Step, names []string) timeline {
	in := map[string]bool{}
	for _, s := range steps {
		in[s.Name] = true
	}
	tl := timeline{Values: map[string][]float64{}}
	cols := map[string]int{}
	for _, n := range names {
		cols[n] = r.Series.Column(n)
	}
	prev := ""
	for _, row := range r.Series.Rows {
		if !in[row.Step] {
			continue
		}
		if prev != "" && row.Step != prev {
			// A gap between steps: lines do not join one step to the next.
			tl.X = append(tl.X, row.ElapsedS)
			for _, n := range names {
				tl.Values[n] = append(tl.Values[n], math.NaN())
			}
		}
		prev = row.Step
		tl.X = append(tl.X, row.ElapsedS)
		for _, n := range names {
			v := math.NaN()
			if c := cols[n]; c >= 0 {
				v = row.Values[c]
			}
			tl.Values[n] = append(tl.Values[n], v)
		}
	}
	return tl
}

// has reports whether a timeline column has any value.
func (tl timeline) has(name string) bool {
	for _, v := range tl.Values[name] {
		if !math.IsNaN(v) {
			return true
		}
	}
	return false
}

// stepBands shades each step of a timeline: its ramp-up, then its measured part.
func (r *runView) stepBands(steps []results.Step, label func(results.Step) string, scale float64) []band {
	var out []band
	for _, s := range steps {
		if s.Started.IsZero() || s.Ended.IsZero() {
			continue
		}
		start, measure, end := r.seconds(s)
		if measure > start {
			out = append(out, band{From: start / scale, To: measure / scale, Label: s.Name + " ramp-up", Ramp: true})
		}
		out = append(out, band{From: measure / scale, To: end / scale, Label: label(s)})
	}
	return out
}

// deviceOrder lists the block devices sampled in any of the steps.
func deviceOrder(steps []results.Step) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range steps {
		if s.Telemetry == nil {
			continue
		}
		for _, d := range s.Telemetry.Devices {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// targetsOf dedups the run's targets (dbio quick records its target once
// for the engine and once for fio).
func targetsOf(run results.Run) []results.TargetInfo {
	var out []results.TargetInfo
	seen := map[string]bool{}
	for _, t := range run.Environment.Targets {
		key := string(t.Role) + "\x00" + t.Path
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, t)
	}
	return out
}

// runName is the name part of a run's id: 20261122-001305-sqlite-ext4 → sqlite-ext4.
func runName(r *runView) string {
	id := r.Run.ID
	if id == "" {
		id = filepath.Base(r.Path)
	}
	parts := strings.SplitN(id, "-", 3)
	if len(parts) == 3 && len(parts[0]) == 8 && len(parts[1]) == 6 {
		return parts[2]
	}
	return id
}

// oneLine shows the line breaks and tabs of a run's name as escapes: a
// name heads lines of a comparison on the terminal and in files, and one
// holding a line break (from a results directory someone handed over) would
// print a line of its own choosing there. results keeps them in the notes
// and errors it reads back, which span lines.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
}

// nameRuns gives each run the shortest name that tells it apart: the name
// of its results directory, else what is behind its first target, else its
// id.
func nameRuns(runs []*runView) {
	candidates := []func(r *runView) string{
		runName,
		func(r *runView) string {
			ts := targetsOf(r.Run)
			if len(ts) == 0 {
				return ""
			}
			return ts[0].Storage.FSType + " " + ts[0].Path
		},
		func(r *runView) string { return r.Run.ID },
		func(r *runView) string { return r.Path },
	}
	for _, c := range candidates {
		seen := map[string]bool{}
		ok := true
		for _, r := range runs {
			n := oneLine(c(r))
			if n == "" || seen[n] {
				ok = false
				break
			}
			seen[n] = true
		}
		if ok {
			for _, r := range runs {
				r.Name = oneLine(c(r))
			}
			return
		}
	}
	// The same directory twice: number the repeats.
	seen := map[string]int{}
	for _, r := range runs {
		n := oneLine(runName(r))
		seen[n]++
		r.Name = n
		if seen[n] > 1 {
			r.Name = fmt.Sprintf("%s #%d", n, seen[n])
		}
	}
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
