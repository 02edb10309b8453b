package suite

import (
	"fmt"
	"strings"

	"dbio/internal/results"
)

// ThresholdDef is a [[threshold]] table: a bound on a recorded figure that
// each run of the suite (or the one it names) must meet, as --threshold
// gives it on a command; a broken one makes dbio suite exit 99.
//
//	[[threshold]]
//	expr = "nopm>=40000"
//	run = "tpcc-nvme"   # optional: every run when left out
type ThresholdDef struct {
	Expr string `toml:"expr"`
	Run  string `toml:"run"`
}

// RunThreshold is a threshold and the run it judges ("" for every run),
// named as the suite expands it without its repetition suffix.
type RunThreshold struct {
	Run string `json:"run,omitempty"`
	results.Threshold
}

// thresholds validates the [[threshold]] tables against the expanded runs.
func (v *validator) thresholds(runs []Run) []RunThreshold {
	var names []string
	seen := map[string]bool{}
	for _, r := range runs {
		if !seen[r.Base] {
			seen[r.Base] = true
			names = append(names, r.Base)
		}
	}
	var out []RunThreshold
	for i, d := range v.f.Thresholds {
		table := fmt.Sprintf("threshold[%d]", i)
		if strings.TrimSpace(d.Expr) == "" {
			v.addf(table, "expr", "give the bound, e.g. expr = \"nopm>=40000\" or \"new_order:p99<=50ms\"")
			continue
		}
		t, err := results.ParseThreshold(d.Expr)
		if err != nil {
			v.addf(table, "expr", "%v", err)
			continue
		}
		if d.Run != "" && !seen[d.Run] {
			v.addf(table, "run", "no run named %q%s (runs: %s)", d.Run, closest(d.Run, names), strings.Join(names, ", "))
			continue
		}
		out = append(out, RunThreshold{Run: d.Run, Threshold: t})
	}
	return out
}

// ThresholdsFor are the thresholds that judge the run named base.
func (p Plan) ThresholdsFor(base string) []results.Threshold {
	var out []results.Threshold
	for _, t := range p.Thresholds {
		if t.Run == "" || t.Run == base {
			out = append(out, t.Threshold)
		}
	}
	return out
}
