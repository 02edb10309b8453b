package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"dbio/internal/results"
)

// The report reads a results directory through the JSON it contains and
// nothing else. A step's telemetry and detail belong to the packages that
// wrote them (internal/telemetry, internal/fio); the report decodes the few
// fields it shows into its own types below, so that it can read directories
// written by any dbio of the same schema, and a step it does not understand
// still shows its figures.

// runView is one results directory as the report sees it.
type runView struct {
	*results.Loaded
	// Letter names the run in a comparison ("A", "B"); empty alone.
	Letter string
	// Name is a short, distinguishing name (see nameRuns).
	Name string
	// Workload steps carry transactions (TPC-C and the like), grouped by
	// kind in the order they ran; fio steps are fio points; other steps
	// have figures only.
	Workloads []workloadSteps
	Fio       []stepView
	Other     []stepView
}

// workloadSteps are the transaction steps of one kind.
type workloadSteps struct {
	Kind  string
	Steps []stepView
}

// stepView is a step with its telemetry and fio detail decoded.
type stepView struct {
	results.Step
	Tel *telemetryView
	Fio *fioDetail
}

// telemetryView mirrors the fields of internal/telemetry's Summary the report shows.
type telemetryView struct {
	Samples  int                 `json:"samples"`
	CPUs     int                 `json:"cpus"`
	Devices  []string            `json:"devices"`
	Metrics  map[string]statView `json:"metrics"`
	Verdict  verdictView         `json:"verdict"`
	Driver   *shareView          `json:"driver"`
	Server   *shareView          `json:"server"`
	Warnings []string            `json:"warnings"`
}

type statView struct {
	Mean    float64 `json:"mean"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
	Samples int     `json:"samples"`
}

type verdictView struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

type shareView struct {
	CPUPct float64 `json:"cpu_pct"`
	Cores  float64 `json:"cores"`
	RSSMB  float64 `json:"rss_mb"`
	Text   string  `json:"text"`
}

// mean is the step mean of a metric, NaN when it was not sampled.
func (t *telemetryView) mean(name string) float64 {
	if t == nil {
		return math.NaN()
	}
	s, ok := t.Metrics[name]
	if !ok || s.Samples == 0 {
		return math.NaN()
	}
	return s.Mean
}

// p99 is the 99th percentile of a metric's per-second values, NaN when absent.
func (t *telemetryView) p99(name string) float64 {
	if t == nil {
		return math.NaN()
	}
	s, ok := t.Metrics[name]
	if !ok || s.Samples == 0 {
		return math.NaN()
	}
	return s.P99
}

// verdictHead is the verdict's first clause: "I/O bound".
func (t *telemetryView) verdictHead() string {
	if t == nil || t.Verdict.Text == "" {
		return ""
	}
	head, _, _ := strings.Cut(t.Verdict.Text, ":")
	return head
}

// fioDetail mirrors the fields of internal/fio's PointResult the report uses.
type fioDetail struct {
	Name        string       `json:"name"`
	Series      string       `json:"series"`
	RW          string       `json:"rw"`
	BS          int64        `json:"bs"`
	ReadPct     int          `json:"read_pct"`
	IODepth     int          `json:"iodepth"`
	Jobs        int          `json:"jobs"`
	RuntimeS    int          `json:"runtime_s"`
	RampS       int          `json:"ramp_s"`
	Loops       int          `json:"loops"`
	RateOf      string       `json:"rate_of"`
	RatePct     float64      `json:"rate_pct"`
	RateIOPS    int64        `json:"rate_iops"`
	Label       string       `json:"label"`
	Targets     []string     `json:"targets"`
	Profile     string       `json:"profile"`
	Engine      string       `json:"engine"`
	Direct      bool         `json:"direct"`
	ElapsedS    int          `json:"elapsed_s"`
	SteadyState *steadyState `json:"steady_state"`
}

type steadyState struct {
	Criterion      string  `json:"criterion"`
	WindowS        int     `json:"window_s"`
	Attained       bool    `json:"attained"`
	Value          string  `json:"value"`
	WindowIOPSMean float64 `json:"window_iops_mean"`
}

// pattern names the access pattern for a reader: "random read", "70 % read random mix".
func (d *fioDetail) pattern() string {
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

// shape identifies what a point measured, whatever its name and target:
// comparisons match points on it.
func (d *fioDetail) shape() string {
	return fmt.Sprintf("%s/%s/r%d/qd%dx%d/rate%g/loops%d", d.RW, blockSize(d.BS), d.ReadPct, d.IODepth, d.Jobs, d.RatePct, d.Loops)
}

// newRunView decodes a loaded results directory.
func newRunView(l *results.Loaded) (*runView, error) {
	r := &runView{Loaded: l}
	index := map[string]int{}
	for _, s := range l.Steps {
		v := stepView{Step: s}
		if len(s.Telemetry) > 0 && string(s.Telemetry) != "null" {
			var t telemetryView
			if err := json.Unmarshal(s.Telemetry, &t); err != nil {
				return nil, fmt.Errorf("%s: step %s: telemetry: %w", l.Path, s.Name, err)
			}
			v.Tel = &t
		}
		switch {
		case s.Kind == "fio":
			d := &fioDetail{Name: s.Name, Series: s.Name}
			if len(s.Detail) > 0 {
				if err := json.Unmarshal(s.Detail, d); err != nil {
					return nil, fmt.Errorf("%s: step %s: fio detail: %w", l.Path, s.Name, err)
				}
			}
			v.Fio = d
			r.Fio = append(r.Fio, v)
		case s.Total != nil:
			i, ok := index[s.Kind]
			if !ok {
				i = len(r.Workloads)
				index[s.Kind] = i
				r.Workloads = append(r.Workloads, workloadSteps{Kind: s.Kind})
			}
			r.Workloads[i].Steps = append(r.Workloads[i].Steps, v)
		default:
			r.Other = append(r.Other, v)
		}
	}
	return r, nil
}

// workloadTitle names a workload kind for headings.
func workloadTitle(kind string) string {
	switch kind {
	case "tpcc":
		return "TPC-C"
	case "sysbench":
		return "sysbench OLTP"
	case "as3ap":
		return "AS3AP"
	}
	return kind
}

// config returns the value at a path of run.json's configuration.
func (r *runView) config(path ...string) (any, bool) {
	var v any
	d := json.NewDecoder(bytes.NewReader(r.Run.Config))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

func (r *runView) configString(path ...string) string {
	v, ok := r.config(path...)
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// warehouses is the TPC-C scale, from the configuration or the load report.
func (r *runView) warehouses() int {
	if v, ok := r.config("tpcc", "warehouses"); ok {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return int(i)
			}
		}
	}
	if r.Run.Load != nil {
		return r.Run.Load.Scale
	}
	return 0
}

// users is the virtual-user sequence: as configured, else as run.
func (r *runView) users(w workloadSteps) []int {
	if v, ok := r.config("users"); ok {
		if list, ok := v.([]any); ok {
			var out []int
			for _, x := range list {
				if n, ok := x.(json.Number); ok {
					if i, err := n.Int64(); err == nil {
						out = append(out, int(i))
					}
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	var out []int
	for _, s := range w.Steps {
		out = append(out, s.Users)
	}
	return out
}

// seconds converts an instant to seconds since the run started, the x of
// every timeline (series.csv's elapsed_s).
func (r *runView) seconds(s stepView) (start, measure, end float64) {
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
func (r *runView) timeline(steps []stepView, names []string) timeline {
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
func (r *runView) stepBands(steps []stepView, label func(stepView) string, scale float64) []band {
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
func deviceOrder(steps []stepView) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range steps {
		if s.Tel == nil {
			continue
		}
		for _, d := range s.Tel.Devices {
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

// storageText describes what is behind a target: "ext4 on vda (QEMU HARDDISK, rotational)".
func storageText(t results.TargetInfo) string {
	st := t.Storage
	s := st.FSType
	if s == "" {
		s = "unknown filesystem"
	}
	var disks []string
	for _, d := range st.Physical {
		desc := d.Name
		var attrs []string
		if d.Model != "" {
			attrs = append(attrs, d.Model)
		}
		if d.Rotational {
			attrs = append(attrs, "rotational")
		} else {
			attrs = append(attrs, "non-rotational")
		}
		if len(attrs) > 0 {
			desc += " (" + strings.Join(attrs, ", ") + ")"
		}
		disks = append(disks, desc)
	}
	switch {
	case len(disks) > 0 && st.Device != "" && (len(st.Physical) != 1 || st.Physical[0].Name != st.Device):
		s += " on " + st.Device + " → " + strings.Join(disks, " + ")
	case len(disks) > 0:
		s += " on " + strings.Join(disks, " + ")
	case st.Device != "":
		s += " on " + st.Device
	default:
		s += ", no block device"
	}
	return s
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
			n := c(r)
			if n == "" || seen[n] {
				ok = false
				break
			}
			seen[n] = true
		}
		if ok {
			for _, r := range runs {
				r.Name = c(r)
			}
			return
		}
	}
	// The same directory twice: number the repeats.
	seen := map[string]int{}
	for _, r := range runs {
		n := runName(r)
		seen[n]++
		r.Name = n
		if seen[n] > 1 {
			r.Name = fmt.Sprintf("%s #%d", n, seen[n])
		}
	}
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
