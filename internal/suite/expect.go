package suite

import (
	"fmt"
	"strconv"
	"strings"

	"dbio/internal/results"
)

// ExpectDef is an [[expect]] table: a finding of the seed study that the
// suite's runs should reproduce, said as run B's figure against run A's.
//
//	[[expect]]
//	finding = "SATA-class TPM at most 0.8x NVMe-class at the largest step"
//	figure = "tpm"
//	a = "tpcc-nvme"
//	b = "tpcc-sata"
//	relation = "lower"
//	ratio = 0.8
//	seed = "0.50x (738,067 vs 1,463,290 TPM at 89 users)"
type ExpectDef struct {
	Finding  string  `toml:"finding"`
	Figure   string  `toml:"figure"`
	A        string  `toml:"a"`
	B        string  `toml:"b"`
	Relation string  `toml:"relation"`
	Ratio    float64 `toml:"ratio"`
	// Step picks the steps read on both sides; AStep and BStep on one
	// side only (a noisy-neighbour run against itself: quiet, then
	// interference). Each is a string or a user count.
	Step  any     `toml:"step"`
	AStep any     `toml:"a_step"`
	BStep any     `toml:"b_step"`
	Floor float64 `toml:"floor"`
	Seed  string  `toml:"seed"`
}

// DefaultFloor is how far apart one run and one run must be for their
// difference to count as more than noise: 30 %, about what two short runs
// of the same configuration differ by on a busy two-core machine.
const DefaultFloor = 0.3

// Step selectors that are not a step's kind, name or user count.
const (
	StepLargest = "largest"
	StepAverage = "average"
	// StepRun reads the figures of the whole run (the largest load kept
	// under a response-time ceiling).
	StepRun = "run"
)

// scenarioSteps are the steps a scenario's runs record, by the kind or
// name prefix an expectation may select them with.
var scenarioSteps = map[string][]string{
	"backup":          {"backup", "restore"},
	"noisy-neighbour": {"quiet", "interference"},
}

// expectations validates the [[expect]] tables against the expanded runs.
func (v *validator) expectations(runs []Run) []results.Expectation {
	byBase := map[string]Run{}
	var names []string
	for _, r := range runs {
		if _, ok := byBase[r.Base]; !ok {
			byBase[r.Base] = r
			names = append(names, r.Base)
		}
	}
	var out []results.Expectation
	for i, e := range v.f.Expect {
		table := fmt.Sprintf("expect[%d]", i)
		x := results.Expectation{Finding: strings.TrimSpace(e.Finding), Figure: e.Figure, A: e.A, B: e.B,
			Relation: results.Relation(e.Relation), Ratio: e.Ratio, Floor: e.Floor, Seed: e.Seed}
		if x.Finding == "" {
			v.addf(table, "finding", "say the seed study's finding in words, e.g. \"SATA-class TPM at most 0.8x NVMe-class\"")
		}
		switch {
		case e.Figure == "":
			v.addf(table, "figure", "name the figure compared, e.g. tpm (figures: %s)", strings.Join(v.env.Figures, ", "))
		case !contains(v.env.Figures, e.Figure):
			v.addf(table, "figure", "unknown figure %q%s: use one of %s", e.Figure, closest(e.Figure, v.env.Figures), strings.Join(v.env.Figures, ", "))
		}
		side := func(key, name string) (Run, bool) {
			if name == "" {
				v.addf(table, key, "name the run, as the suite expands it without its repetition suffix (runs: %s)", strings.Join(names, ", "))
				return Run{}, false
			}
			r, ok := byBase[name]
			if !ok {
				v.addf(table, key, "no run named %q%s (runs: %s)", name, closest(name, names), strings.Join(names, ", "))
			}
			return r, ok
		}
		ra, okA := side("a", e.A)
		rb, okB := side("b", e.B)
		switch x.Relation {
		case results.Lower, results.Higher:
		case "":
			v.addf(table, "relation", "say which way b goes against a: lower or higher")
		default:
			v.addf(table, "relation", "%q: use lower or higher%s", e.Relation, closest(e.Relation, []string{"lower", "higher"}))
		}
		if e.Ratio < 0 || e.Ratio > 1000 {
			v.addf(table, "ratio", "%v: give b / a as a positive number, such as 0.8 (b at most 0.8x a, with lower) or 1.5 (at least 1.5x, with higher)", e.Ratio)
		}
		switch {
		case e.Floor == 0:
			x.Floor = DefaultFloor
		case e.Floor < 0 || e.Floor >= 10:
			v.addf(table, "floor", "%v: give the difference one run against one run must pass as a fraction, such as 0.3 for 30 %%", e.Floor)
		}
		step := v.stepSelector(table, "step", e.Step, "")
		x.StepA = v.stepSelector(table, "a_step", e.AStep, step)
		x.StepB = v.stepSelector(table, "b_step", e.BStep, step)
		if okA {
			x.StepA = v.checkStep(table, sideKey("a_step", e.AStep), x.StepA, ra)
		}
		if okB {
			x.StepB = v.checkStep(table, sideKey("b_step", e.BStep), x.StepB, rb)
		}
		if okA && okB && x.A == x.B && x.StepA == x.StepB {
			v.addf(table, "b", "a and b are the same run at the same steps: name another run, or give a_step and b_step")
		}
		out = append(out, x)
	}
	return out
}

// sideKey is the key a side's selector came from: its own, or step.
func sideKey(own string, x any) string {
	if x == nil {
		return "step"
	}
	return own
}

// stepSelector reads a step selector: a string, or a whole number of users.
func (v *validator) stepSelector(table, key string, x any, def string) string {
	switch t := x.(type) {
	case nil:
		return def
	case int64:
		if t < 1 || t > maxUsers {
			v.addf(table, key, "%d: a user count from 1 to %d", t, maxUsers)
			return def
		}
		return strconv.FormatInt(t, 10)
	case string:
		if strings.TrimSpace(t) == "" {
			v.addf(table, key, "is empty: use largest, average, a user count, or a step such as backup")
			return def
		}
		return strings.TrimSpace(t)
	}
	v.addf(table, key, "expected largest, average, a user count such as 8, or a step such as backup")
	return def
}

// checkStep refuses a selector the run cannot have steps for (a user count
// on a run without user steps, a scenario's step on another run) and
// returns the selector, the run's default (largest) when none was given.
func (v *validator) checkStep(table, key, sel string, r Run) string {
	steps, scenario := scenarioSteps[r.Scenario]
	switch {
	case r.Kind == KindReplay && (sel == "" || sel == KindReplay):
		// A replay records one step, of its own kind and name.
		return KindReplay
	case r.Kind == KindReplay:
		v.addf(table, key, "%q: run %s is a replay, which records one step: leave %s out (or write %q)", sel, r.Base, key, KindReplay)
	case sel == StepRun:
	case scenario && sel == "":
		v.addf(table, key, "run %s is a %s scenario: pick its steps with one of %s", r.Base, r.Scenario, strings.Join(steps, ", "))
	case scenario && !contains(steps, sel):
		v.addf(table, key, "%q: run %s is a %s scenario, whose steps are %s%s", sel, r.Base, r.Scenario, strings.Join(steps, ", "), closest(sel, steps))
	case scenario:
	case r.Kind == "disk" && (sel == "" || sel == StepLargest || sel == StepAverage || isCount(sel)):
		v.addf(table, key, "run %s is a fio pass, which has no user steps: name one of its points, such as 4k-randread", r.Base)
	case r.Kind == "disk":
	case sel == "":
		return StepLargest
	case sel != StepLargest && sel != StepAverage && !isCount(sel):
		v.addf(table, key, "%q: use largest, average, run or a user count such as 8%s", sel, closest(sel, []string{StepLargest, StepAverage, StepRun}))
	}
	return sel
}

func isCount(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0
}
