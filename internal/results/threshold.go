package results

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"dbio/internal/controlchars"
	"dbio/internal/registry"
)

// Threshold is a pass or fail bound on one recorded figure, as --threshold
// and a suite's [[threshold]] give it: "nopm>=40000",
// "new_order:p99<=50ms", "iops[4k-randread]>=100000". A broken threshold
// fails the command (exit code 99), so that a CI job fails with it.
type Threshold struct {
	// Expr is the threshold as the user wrote it.
	Expr string `json:"expr"`
	// Figure is the catalogue's figure judged; empty when TxType or Stat
	// name a transaction latency instead.
	Figure FigureName `json:"figure,omitempty"`
	// TxType is the transaction type whose latency Stat judges; empty
	// with a Stat is every transaction of the step.
	TxType string `json:"tx_type,omitempty"`
	// Stat is a transaction latency statistic (mean, p50, p95, p99,
	// p99.9, max), in ms.
	Stat string `json:"stat,omitempty"`
	// Step is the one step judged; empty judges every step that records
	// the figure (and the run's own figures).
	Step string `json:"step,omitempty"`
	// Op is one of >=, <=, > and <.
	Op string `json:"op"`
	// Limit is the bound in Unit, the figure's catalogue unit.
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit,omitempty"`
}

// ThresholdResult is a threshold judged against a finished run.
type ThresholdResult struct {
	Threshold
	Passed bool `json:"passed"`
	// Measured is the value judged: the worst of the steps judged (the
	// lowest against a lower bound, the highest against an upper one);
	// nil when nothing recorded the figure.
	Measured *float64 `json:"measured,omitempty"`
	// At is where Measured was read: a step's name, or "run".
	At string `json:"at,omitempty"`
	// Detail says why, in a few words.
	Detail string `json:"detail,omitempty"`
}

// TxLatencyStats are the statistics a threshold may judge of a transaction
// type's latency (or every type's, named without a type), in ms.
var txLatencyStats = []string{"mean", "p50", "p95", "p99", "p99.9", "max"}

// thresholdOps are the comparisons, longest first so that ">=" is not read as ">".
var thresholdOps = []string{">=", "<=", ">", "<"}

// thresholdForm is the form every threshold problem ends with.
const thresholdForm = "write FIGURE[STEP]OP VALUE, e.g. nopm>=40000, new_order:p99<=50ms or iops[4k-randread]>=100000"

// ParseThreshold reads one threshold. The figure is named as the figure
// catalogue names it (nopm, tps, iops, lat_p99_us), or as TYPE:STAT for a
// transaction type's latency (new_order:p99, STAT one of mean, p50, p95,
// p99, p99.9, max) or STAT alone for every transaction's. The value is in
// the figure's catalogue unit, or, for a latency or a duration, any of Go's
// duration units (50ms, 1.5s, 200us).
func ParseThreshold(expr string) (Threshold, error) {
	t := Threshold{Expr: expr}
	bad := func(msg string) (Threshold, error) {
		return Threshold{}, fmt.Errorf("threshold %q: %s", expr, msg)
	}
	if err := controlchars.Check(expr); err != nil {
		return bad(err.Error())
	}
	s := strings.TrimSpace(expr)
	opAt, op := -1, ""
	for i := 0; i < len(s) && opAt < 0; i++ {
		for _, o := range thresholdOps {
			if strings.HasPrefix(s[i:], o) {
				opAt, op = i, o
				break
			}
		}
	}
	if opAt < 0 {
		if strings.Contains(s, "=") {
			return bad("'=' alone is no comparison: use >=, <=, > or <; " + thresholdForm)
		}
		return bad("no comparison (>=, <=, > or <); " + thresholdForm)
	}
	t.Op = op
	name, value := strings.TrimSpace(s[:opAt]), strings.TrimSpace(s[opAt+len(op):])
	if open := strings.IndexByte(name, '['); open >= 0 {
		if !strings.HasSuffix(name, "]") || open == 0 {
			return bad("a step is named in brackets after the figure, e.g. iops[4k-randread]")
		}
		t.Step = strings.TrimSpace(name[open+1 : len(name)-1])
		name = strings.TrimSpace(name[:open])
		if t.Step == "" || strings.ContainsAny(t.Step, "[]") {
			return bad("the step in brackets is empty or malformed: name one as the run names it, e.g. users-8 or 4k-randread")
		}
	}
	if name == "" {
		return bad("no figure before " + op + "; " + thresholdForm)
	}
	if tx, stat, typed := strings.Cut(name, ":"); typed {
		if tx == "" || !validTxType(tx) {
			return bad(fmt.Sprintf("transaction type %q may only hold letters, digits, '_' and '-'", tx))
		}
		if !slices.Contains(txLatencyStats, stat) {
			return bad(fmt.Sprintf("%q is no latency statistic of a transaction type%s: use one of %s",
				stat, registry.DidYouMean(stat, txLatencyStats, 2), strings.Join(txLatencyStats, ", ")))
		}
		t.TxType, t.Stat, t.Unit = tx, stat, "ms"
	} else if slices.Contains(txLatencyStats, name) && !FigureName(name).Defined() {
		t.Stat, t.Unit = name, "ms"
	} else {
		d, ok := FigureName(name).lookup()
		if !ok || d.In == 0 {
			return bad(fmt.Sprintf("%q is not a figure dbio records%s; name one of the figure catalogue (nopm, tps, qps, iops, lat_p99_us, ...) or TYPE:STAT for a transaction type's latency (new_order:p99)",
				name, registry.DidYouMean(name, thresholdNames(), 3)))
		}
		t.Figure, t.Unit = FigureName(name), d.Unit
	}
	limit, err := thresholdValue(value, t.Unit)
	if err != nil {
		return bad(err.Error())
	}
	t.Limit = limit
	return t, nil
}

// Name is the figure judged as the threshold names it: "nopm",
// "new_order:p99", with its step in brackets.
func (t Threshold) Name() string {
	n := string(t.Figure)
	switch {
	case t.TxType != "":
		n = t.TxType + ":" + t.Stat
	case t.Stat != "":
		n = t.Stat
	}
	if t.Step != "" {
		n += "[" + t.Step + "]"
	}
	return n
}

// Holds says whether v meets the threshold.
func (t Threshold) Holds(v float64) bool {
	switch t.Op {
	case ">=":
		return v >= t.Limit
	case "<=":
		return v <= t.Limit
	case ">":
		return v > t.Limit
	case "<":
		return v < t.Limit
	}
	return false
}

// Lower says the threshold is a lower bound (the figure must stay above it).
func (t Threshold) Lower() bool { return strings.HasPrefix(t.Op, ">") }

// ParseThresholds reads every threshold, all problems at once.
func ParseThresholds(exprs []string) ([]Threshold, error) {
	var out []Threshold
	var problems []error
	for _, e := range exprs {
		t, err := ParseThreshold(e)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(problems...)
}

func validTxType(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// thresholdNames are the names a misspelt figure is matched against.
func thresholdNames() []string {
	names := slices.Clone(txLatencyStats)
	for _, d := range catalogue {
		if d.In != 0 && !strings.Contains(string(d.Name), "*") {
			names = append(names, string(d.Name))
		}
	}
	return names
}

// durationUnits are the catalogue's units of time and their length.
var durationUnits = map[string]time.Duration{"µs": time.Microsecond, "ms": time.Millisecond, "s": time.Second}

// thresholdValue reads a threshold's value into unit: a number in unit, or
// a duration for a figure in a unit of time.
func thresholdValue(s, unit string) (float64, error) {
	if s == "" {
		return 0, errors.New("no value after the comparison; " + thresholdForm)
	}
	// The number is the longest start of s that reads as one: "5e3" is a
	// number, "5errors/s" a number and a unit.
	cut := 0
	var v float64
	for i := len(s); i > 0; i-- {
		if f, err := strconv.ParseFloat(s[:i], 64); err == nil {
			cut, v = i, f
			break
		}
	}
	if cut == 0 {
		return 0, fmt.Errorf("%q is not a number; %s", s, thresholdForm)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	suffix := strings.TrimSpace(s[cut:])
	if suffix == "" || strings.EqualFold(suffix, unit) {
		return v, nil
	}
	_, durationErr := time.ParseDuration(strings.ReplaceAll(s, " ", ""))
	per, timed := durationUnits[unit]
	switch {
	case timed && durationErr == nil:
		d, _ := time.ParseDuration(strings.ReplaceAll(s, " ", ""))
		return float64(d) / float64(per), nil
	case timed:
		return 0, fmt.Errorf("%q: the figure is a time in %s; give a number in %s or a duration such as 50ms or 200us", s, unit, unit)
	case durationErr == nil:
		return 0, fmt.Errorf("%q is a duration, the figure is in %s: give a number in %s", s, unitWords(unit), unitWords(unit))
	}
	return 0, fmt.Errorf("%q: the figure is in %s, not %q: give a number, in %s", s, unitWords(unit), suffix, unitWords(unit))
}

func unitWords(unit string) string {
	if unit == "" {
		return "no unit (a count)"
	}
	return unit
}

// AmendRun changes the run.json of the finished run in dir, the run this
// dbio just made: what is judged or named of a run once it ended (its
// thresholds, its labels) is kept with it, so that its report, the history
// and a CI job read the same record.
func AmendRun(dir string, change func(*Run)) error {
	var run Run
	if err := readJSONIn(dir, "run.json", &run); err != nil {
		return err
	}
	change(&run)
	return WriteJSON(filepath.Join(dir, "run.json"), run)
}
