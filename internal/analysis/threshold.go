package analysis

import (
	"fmt"
	"math"
	"strings"

	"dbio/internal/results"
	"dbio/internal/units"
)

// JudgeThresholds judges each threshold against a finished run as
// recorded. A threshold without a step is judged on every step that
// recorded its figure (and on the run's own figures), and breaks when any
// of them breaks it: its measured value is the worst. A threshold whose
// figure nothing recorded is broken too, since a CI job cannot pass on a
// figure it never measured.
func JudgeThresholds(l *results.Loaded, ths []results.Threshold) []results.ThresholdResult {
	out := make([]results.ThresholdResult, 0, len(ths))
	for _, t := range ths {
		out = append(out, judgeThreshold(l, t))
	}
	return out
}

// ThresholdsBroken counts the thresholds judged broken.
func ThresholdsBroken(judged []results.ThresholdResult) int {
	n := 0
	for _, r := range judged {
		if !r.Passed {
			n++
		}
	}
	return n
}

type thresholdValue struct {
	at string
	v  float64
}

func judgeThreshold(l *results.Loaded, t results.Threshold) results.ThresholdResult {
	r := results.ThresholdResult{Threshold: t}
	var values []thresholdValue
	if t.Figure != "" && t.Step == "" {
		for _, f := range l.Run.Figures {
			if f.Name == t.Figure {
				values = append(values, thresholdValue{"run", f.Value})
			}
		}
	}
	named := false
	for _, s := range l.Steps {
		if t.Step != "" && s.Name != t.Step {
			continue
		}
		named = true
		if v, ok := thresholdStepValue(s, t); ok {
			values = append(values, thresholdValue{s.Name, v})
		}
	}
	if len(values) == 0 {
		switch {
		case t.Step != "" && !named:
			r.Detail = fmt.Sprintf("the run has no step %q (its steps: %s)", t.Step, stepNames(l.Steps))
		case t.Step != "":
			r.Detail = fmt.Sprintf("step %s did not record %s", t.Step, thresholdTitle(t))
		default:
			r.Detail = fmt.Sprintf("no step recorded %s", thresholdTitle(t))
		}
		return r
	}
	worst := values[0]
	for _, v := range values[1:] {
		if t.Lower() && v.v < worst.v || !t.Lower() && v.v > worst.v {
			worst = v
		}
	}
	measured := worst.v
	r.Measured, r.At, r.Passed = &measured, worst.at, t.Holds(worst.v)
	where := "at " + worst.at
	if worst.at != "run" {
		where = "at step " + worst.at
	}
	if len(values) > 1 {
		where += fmt.Sprintf(", the worst of %d", len(values))
	}
	r.Detail = fmt.Sprintf("%s %s %s", ThresholdQuantity(measured, t.Unit), where, map[bool]string{true: "meets it", false: "breaks it"}[r.Passed])
	return r
}

// thresholdStepValue is the value a step recorded of the threshold's figure.
func thresholdStepValue(s results.Step, t results.Threshold) (float64, bool) {
	if t.Figure != "" {
		return s.Figure(t.Figure)
	}
	if t.TxType == "" {
		if s.Total == nil || s.Total.Latency.Count == 0 {
			return 0, false
		}
		return latencyStatMS(s.Total.Latency.MeanUS, s.Total.Latency.P50US, s.Total.Latency.P95US, s.Total.Latency.P99US, s.Total.Latency.P999US, s.Total.Latency.MaxUS, t.Stat)
	}
	for _, tx := range s.Transactions {
		if tx.Name == t.TxType && tx.Latency.Count > 0 {
			l := tx.Latency
			return latencyStatMS(l.MeanUS, l.P50US, l.P95US, l.P99US, l.P999US, l.MaxUS, t.Stat)
		}
	}
	return 0, false
}

func latencyStatMS(mean float64, p50, p95, p99, p999, maxUS int64, stat string) (float64, bool) {
	us := map[string]float64{"mean": mean, "p50": float64(p50), "p95": float64(p95), "p99": float64(p99), "p99.9": float64(p999), "max": float64(maxUS)}
	v, ok := us[stat]
	return v / 1000, ok
}

// thresholdTitle is the threshold's figure in words.
func thresholdTitle(t results.Threshold) string {
	switch {
	case t.TxType != "":
		return t.Stat + " latency of " + t.TxType
	case t.Stat != "":
		return t.Stat + " latency"
	}
	return t.Figure.Def().Title
}

// ThresholdQuantity writes a threshold's value with its unit.
func ThresholdQuantity(v float64, unit string) string {
	s := units.FormatHuge(v)
	if math.Abs(v) >= 1000 && math.Abs(v) < 1e15 {
		s = units.GroupThousands(int64(math.Round(v)))
	}
	if unit == "" || unit == "bool" {
		return s
	}
	if unit == "%" {
		return s + "%"
	}
	return s + " " + unit
}

// ThresholdLine is a judged threshold as the terminal prints it: "PASS
// nopm>=40000: 41200 new-orders/min at step users-8 meets it".
func ThresholdLine(r results.ThresholdResult) string {
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	return fmt.Sprintf("%s %s: %s", verdict, strings.TrimSpace(r.Expr), r.Detail)
}

func stepNames(steps []results.Step) string {
	if len(steps) == 0 {
		return "none recorded"
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}
