package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/results"
)

// Names say how sentences name what they speak of.
type Names struct {
	// Run names run i of a comparison: "A (sqlite-ext4)".
	Run func(i int) string
	// Workload names a workload kind: "TPC-C".
	Workload func(kind string) string
}

// Refusal is why runs cannot be compared meaningfully.
type Refusal struct {
	// Differences are how runs of one kind differ: what they measured,
	// their workloads' scales or pacing, no user count or fio point in
	// common. Runs that agree on them compare.
	Differences []string
	// Fleets are fleet runs set against runs on one machine: each says
	// why, and what to compare instead.
	Fleets []string
}

// Refused says whether there is any reason.
func (r Refusal) Refused() bool { return len(r.Differences)+len(r.Fleets) > 0 }

// Reasons are all of them, the differences first.
func (r Refusal) Reasons() []string { return append(slices.Clip(r.Differences), r.Fleets...) }

// Comparability says why runs cannot be compared meaningfully (the
// refusal: different workloads, TPC-C scales or pacing, no user count or
// fio point in common, a fleet against a run on one machine) and what a
// reader should know about comparing them (warnings: different run kinds,
// step lengths, fio runtimes, unfinished runs, the steps or points left
// out because only one run has them, and a machine busier with other work
// during one run than during the baseline). The first run is the baseline.
func Comparability(runs []*Recorded, n Names) (refusal Refusal, warnings []string) {
	var reasons []string
	a := runs[0]
	kindsA := strings.Join(measured(a, n), " and ")
	for i, b := range runs[1:] {
		whoA, whoB := n.Run(0), n.Run(i+1)
		kindsB := strings.Join(measured(b, n), " and ")
		if kindsA != kindsB {
			reasons = append(reasons, fmt.Sprintf("%s measured %s but %s measured %s", whoA, orNothing(kindsA), whoB, orNothing(kindsB)))
			continue
		}
		if reason, warning := fleetComparability(a, b, whoA, whoB); reason != "" {
			refusal.Fleets = append(refusal.Fleets, reason)
			continue
		} else if warning != "" {
			warnings = append(warnings, warning)
		}
		// A capture and its replays are of two kinds by design.
		if a.Run.Kind != b.Run.Kind && !(results.IsBlockIO(a.Run.Kind) && results.IsBlockIO(b.Run.Kind)) {
			warnings = append(warnings, fmt.Sprintf("%s is a %s run and %s a %s run; their steps are compared where they match", whoA, a.Run.Kind, whoB, b.Run.Kind))
		}
		ca, cb := a.Run.Config, b.Run.Config
		for _, wa := range a.Workloads {
			wb, _ := b.Workload(wa.Kind)
			title := n.Workload(wa.Kind)
			if wa.Kind == "tpcc" {
				if x, y := a.Warehouses(), b.Warehouses(); x != y {
					reasons = append(reasons, fmt.Sprintf("%s ran %s at %s but %s at %s", whoA, title, plural(x, "warehouse", "warehouses"), whoB, plural(y, "warehouse", "warehouses")))
				}
				if x, y := tpccSettings(ca).Text("keying_thinking"), tpccSettings(cb).Text("keying_thinking"); x != y {
					reasons = append(reasons, fmt.Sprintf("%s ran %s with keying_thinking=%s but %s with %s: paced and back-to-back users are different workloads", whoA, title, orNothing(x), whoB, orNothing(y)))
				}
			}
			if ua, ub := a.Users(wa), b.Users(wb); intsText(ua) != intsText(ub) {
				diff := fmt.Sprintf("%s's %s user sequence is %s but %s's is %s", whoA, title, intsText(ua), whoB, intsText(ub))
				common, onlyA, onlyB := splitInts(ua, ub)
				if len(common) == 0 {
					reasons = append(reasons, diff+", with no user count in common")
					continue
				}
				warnings = append(warnings, diff+": only "+intsText(common)+" users are compared"+leftOut(whoA, intsText(onlyA), whoB, intsText(onlyB)))
			}
			for _, k := range []struct{ name, a, b string }{{"step", configSeconds(ca, ca.StepS), configSeconds(cb, cb.StepS)}, {"rampup", configSeconds(ca, ca.RampUpS), configSeconds(cb, cb.RampUpS)}} {
				if k.a != k.b {
					warnings = append(warnings, fmt.Sprintf("%s's %s is %s s and %s's is %s s: the shorter steps may not have reached steady state", whoA, k.name, orNothing(k.a), whoB, orNothing(k.b)))
				}
			}
			if x, y := rampUntil(ca), rampUntil(cb); x != y {
				warnings = append(warnings, fmt.Sprintf("%s %s but %s %s: their measurements began at different points of the warm-up", whoA, rampUpEnd(x), whoB, rampUpEnd(y)))
			}
		}
		if len(a.Fio) > 0 {
			pa, pb := a.FioProfile(), b.FioProfile()
			missing, extra := pointDiff(a, b)
			common := len(a.Fio) - len(missing)
			switch {
			case pa != pb && common == 0:
				reasons = append(reasons, fmt.Sprintf("%s ran the fio profile %s but %s ran %s, with no point in common", whoA, orNothing(pa), whoB, orNothing(pb)))
			case common == 0:
				reasons = append(reasons, fmt.Sprintf("%s and %s have no fio point in common", whoA, whoB))
			case len(missing)+len(extra) > 0:
				what := "the fio points differ"
				if pa != pb {
					what = fmt.Sprintf("%s ran the fio profile %s but %s ran %s", whoA, orNothing(pa), whoB, orNothing(pb))
				}
				warnings = append(warnings, fmt.Sprintf("%s: only the %s in common are compared%s", what, plural(common, "point", "points"),
					leftOut(whoA, strings.Join(missing, ", "), whoB, strings.Join(extra, ", "))))
			}
			if x, y := fioRuntimes(a), fioRuntimes(b); x != y {
				warnings = append(warnings, fmt.Sprintf("%s's fio points ran %s and %s's %s", whoA, x, whoB, y))
			}
		}
	}
	bgA := BackgroundOf(a)
	for i, b := range runs[1:] {
		if w := backgroundWarning(n.Run(0), n.Run(i+1), bgA, BackgroundOf(b)); w != "" {
			warnings = append(warnings, w)
		}
	}
	for i, r := range runs {
		if r.Run.Status != results.StatusCompleted {
			warnings = append(warnings, fmt.Sprintf("%s is %s: only the steps it finished are compared", n.Run(i), r.Run.Status))
		}
	}
	refusal.Differences = reasons
	return refusal, warnings
}

// tpccSettings are the settings a run recorded under TPC-C's name; none
// for another workload's run.
func tpccSettings(c results.RunConfig) results.Settings {
	if c.Workload != "tpcc" {
		return nil
	}
	return c.Settings
}

// configSeconds is a database run's step or ramp-up as its config records
// it, "" for a config that records none (a disk run's, or none at all).
func configSeconds(c results.RunConfig, seconds float64) string {
	if c.Disk != nil || c.IsZero() {
		return ""
	}
	return strconv.FormatFloat(seconds, 'f', -1, 64)
}

// rampUntil is the criterion a run's ramp-ups were to end at, "" for
// ramp-ups of fixed length.
func rampUntil(c results.RunConfig) string {
	if c.Steady == nil {
		return ""
	}
	return c.Steady.Until
}

// rampUpEnd says how a run's ramp-ups ended, from its ramp_until.
func rampUpEnd(until string) string {
	if until == "" {
		return "ended its ramp-ups after a fixed time"
	}
	return "ended its ramp-ups at steady state (" + until + ")"
}

// measured lists what a run measured, "fio" and its workloads' names, sorted.
func measured(r *Recorded, n Names) []string {
	var out []string
	if len(r.Fio) > 0 {
		out = append(out, "fio")
	}
	for _, w := range r.Workloads {
		out = append(out, n.Workload(w.Kind))
	}
	if len(r.BlockIO) > 0 {
		// A capture and its replays are compared side by side.
		out = append(out, "block I/O")
	}
	sort.Strings(out)
	return out
}

// pointDiff lists the points (by a's names) that b lacks, and b's extra ones.
func pointDiff(a, b *Recorded) (missing, extra []string) {
	ka, kb := PointKeys(a.Fio), PointKeys(b.Fio)
	inB := map[string]bool{}
	for _, k := range kb {
		inB[k] = true
	}
	inA := map[string]bool{}
	for i, k := range ka {
		inA[k] = true
		if !inB[k] {
			missing = append(missing, a.Fio[i].Name)
		}
	}
	for i, k := range kb {
		if !inA[k] {
			extra = append(extra, b.Fio[i].Name)
		}
	}
	return missing, extra
}

// fioRuntimes lists the distinct runtimes of a run's fio points: "3 s, 5 s".
func fioRuntimes(r *Recorded) string {
	seen := map[int]bool{}
	var rts []int
	for _, p := range r.Fio {
		if !seen[p.Fio.RuntimeS] {
			seen[p.Fio.RuntimeS] = true
			rts = append(rts, p.Fio.RuntimeS)
		}
	}
	sort.Ints(rts)
	s := make([]string, len(rts))
	for i, v := range rts {
		s[i] = strconv.Itoa(v) + " s"
	}
	return strings.Join(s, ", ")
}

// splitInts sorts two sequences' values into those both have and those only
// one has, each in its sequence's order.
func splitInts(a, b []int) (common, onlyA, onlyB []int) {
	inA, inB := map[int]bool{}, map[int]bool{}
	for _, v := range a {
		inA[v] = true
	}
	for _, v := range b {
		inB[v] = true
	}
	for _, v := range a {
		if inB[v] {
			common = append(common, v)
		} else {
			onlyA = append(onlyA, v)
		}
	}
	for _, v := range b {
		if !inA[v] {
			onlyB = append(onlyB, v)
		}
	}
	return common, onlyA, onlyB
}

// leftOut says which steps of each run a comparison leaves out:
// " (left out: 4 of A (x); 8 of B (y))", empty when none.
func leftOut(whoA, onlyA, whoB, onlyB string) string {
	var parts []string
	if onlyA != "" {
		parts = append(parts, onlyA+" of "+whoA)
	}
	if onlyB != "" {
		parts = append(parts, onlyB+" of "+whoB)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (left out: " + strings.Join(parts, "; ") + ")"
}

func intsText(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
