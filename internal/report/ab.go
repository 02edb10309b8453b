package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// An A/B study's table: per step, each side's median over its runs, the
// differential and the change in % for each compared figure with the
// verdict of the significance test, the same over each run's average of
// the steps, the largest load each side kept, and the spread of each side.

// WriteAB compares the runs in dirsA and dirsB and writes the comparison as
// stem.json (with the directories compared) and its table as stem.md.
func WriteAB(stem string, dirsA, dirsB []string, labelA, labelB string) (results.ABResult, error) {
	a, err := results.LoadAll(dirsA)
	if err != nil {
		return results.ABResult{}, err
	}
	b, err := results.LoadAll(dirsB)
	if err != nil {
		return results.ABResult{}, err
	}
	res, err := analysis.AB(a, b, labelA, labelB)
	if err != nil {
		return res, err
	}
	if err := results.WriteJSON(stem+".json", results.ABStudy{Result: res, RunsA: dirsA, RunsB: dirsB}); err != nil {
		return res, err
	}
	var md strings.Builder
	ABMarkdown(&md, res)
	return res, results.WriteFileAtomic(stem+".md", []byte(md.String()))
}

// abNames are the compared figures, in the order the study compared them.
func abNames(r results.ABResult) []string {
	var names []string
	seen := map[string]bool{}
	add := func(ms []results.ABMetric) {
		for _, m := range ms {
			if !seen[m.Name] {
				seen[m.Name] = true
				names = append(names, m.Name)
			}
		}
	}
	for _, s := range r.Steps {
		add(s.Metrics)
	}
	add(r.Average)
	return names
}

// ABMarkdown writes an A/B study's tables. The labels come from the
// user's flags and the figures' names and verdicts from ab.json: each is
// escaped (mdEscape, mdCell).
func ABMarkdown(w io.Writer, r results.ABResult) {
	labelA, labelB := mdCell(r.LabelA), mdCell(r.LabelB)
	fmt.Fprintf(w, "# A/B: %s vs %s\n\n", labelA, labelB)
	fmt.Fprintf(w, "A: %s (%s). B: %s (%s). %s\n\n", labelA, plural(r.RunsA, "run", "runs"), labelB, plural(r.RunsB, "run", "runs"), abHowToReadText)
	multi := r.RunsA > 1 || r.RunsB > 1
	for _, name := range abNames(r) {
		fmt.Fprintf(w, "## %s\n\n| users | A | B | B − A | change | verdict |", mdEscape(name))
		if multi {
			fmt.Fprintf(w, " A runs | B runs |")
		}
		fmt.Fprintf(w, "\n|---:|---:|---:|---:|---:|---|")
		if multi {
			fmt.Fprintf(w, "---:|---:|")
		}
		fmt.Fprintln(w)
		row := func(label string, m results.ABMetric) {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |", label, abSide(m.A), abSide(m.B), abSigned(m.Differential), mdCell(abChange(m)), mdCell(abVerdict(m)))
			if multi {
				fmt.Fprintf(w, " %s–%s | %s–%s |", abNum(m.A.Min), abNum(m.A.Max), abNum(m.B.Min), abNum(m.B.Max))
			}
			fmt.Fprintln(w)
		}
		for _, s := range r.Steps {
			for _, m := range s.Metrics {
				if m.Name == name {
					row(fmt.Sprint(s.Users), m)
				}
			}
		}
		for _, m := range r.Average {
			if m.Name == name {
				row("**average**", m)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Largest load\n\n| side | per run | mean |\n|---|---|---:|\n")
	fmt.Fprintf(w, "| A %s | %s | %s |\n| B %s | %s | %s |\n\n", labelA, loads(r.MaxUsersA, r.OpenA), abNum(analysis.Mean(r.MaxUsersA)), labelB, loads(r.MaxUsersB, r.OpenB), abNum(analysis.Mean(r.MaxUsersB)))
	if anyTrue(r.OpenA) || anyTrue(r.OpenB) {
		fmt.Fprintf(w, "≥ marks a run that never reached its ceiling: it kept at least that load.\n\n")
	}
	if r.CacheA != nil || r.CacheB != nil {
		fmt.Fprintf(w, "## Where reads were served\n\n| side | engine cache served | reads asked of the OS /s | reads reaching the device /s | device read latency (ms) |\n|---|---:|---:|---:|---:|\n")
		for _, c := range []struct {
			label string
			c     *results.CacheAccount
		}{{"A " + labelA, r.CacheA}, {"B " + labelB, r.CacheB}} {
			if c.c == nil {
				fmt.Fprintf(w, "| %s | - | - | - | - |\n", c.label)
				continue
			}
			served := "-"
			if c.c.OSReadsPerS > 0 || c.c.CacheServedPct > 0 {
				served = fixed(c.c.CacheServedPct, 0) + " %"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", c.label, served, abNum(c.c.OSReadsPerS), abNum(c.c.DeviceReadsPerS), fixed(c.c.DeviceReadAwaitMS, 2))
		}
		fmt.Fprintln(w)
	}
}

// abHowToReadText says how an A/B table is read.
const abHowToReadText = "A and B are each side's median over its runs (with its 95 % confidence interval where there are 6 runs or more). " +
	"The change is B against A in %, said as better or worse for that figure only when the difference is significant: " +
	"a Mann-Whitney U test finds it at the 5 % level and it is larger than the spread of each side's own runs (as ratios for figures above zero: B/A beyond each side's highest/lowest). " +
	"With fewer than 4 runs a side no difference can be called, however large."

// ABText writes an A/B study's headline throughput and mean response time
// per step for a terminal, each with its verdict (said once under the
// table when the runs are too few for any), a strip chart of each side's
// runs when there is one step, then the averages of the database's own
// I/O waits and the memory cap's refaults where both sides recorded them,
// the largest loads and where reads were served.
func ABText(w io.Writer, r results.ABResult) error {
	tput, rt := "TPS", analysis.ABName(analysis.ResponseTime(results.StatMean))
	if names := abNames(r); len(names) > 0 {
		tput = names[0]
	}
	words := strings.Fields(tput)
	short := words[len(words)-1]
	type row struct {
		label string
		t, l  results.ABMetric
	}
	var rows []row
	add := func(label string, ms []results.ABMetric) {
		var t, l *results.ABMetric
		for i := range ms {
			switch ms[i].Name {
			case tput:
				t = &ms[i]
			case rt:
				l = &ms[i]
			}
		}
		if t != nil && l != nil {
			rows = append(rows, row{label, *t, *l})
		}
	}
	for _, s := range r.Steps {
		add(fmt.Sprint(s.Users), s.Metrics)
	}
	add("average", r.Average)
	// Runs too few to tell anything are said once, not on every row.
	tooFew := len(rows) > 0
	for _, x := range rows {
		tooFew = tooFew && abTooFew(x.t) && abTooFew(x.l)
	}
	// Figures only, right-aligned; with verdicts, left-aligned as text.
	var align uint
	if tooFew {
		align = tabwriter.AlignRight
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', align)
	if tooFew {
		fmt.Fprintf(tw, "users\tA %s\tB %s\tchange\tA mean ms\tB mean ms\tchange\t\n", short, short)
	} else {
		fmt.Fprintf(tw, "users\tA %s\tB %s\tchange\tverdict\tA mean ms\tB mean ms\tchange\tverdict\n", short, short)
	}
	for _, x := range rows {
		if tooFew {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.label, abFigure(x.t.A.Median), abFigure(x.t.B.Median), abChange(x.t),
				abFigure(x.l.A.Median), abFigure(x.l.B.Median), abChange(x.l))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x.label, abFigure(x.t.A.Median), abFigure(x.t.B.Median), abChange(x.t), abVerdict(x.t),
			abFigure(x.l.A.Median), abFigure(x.l.B.Median), abChange(x.l), abVerdict(x.l))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if tooFew {
		fmt.Fprintf(w, "verdict: %s: A and B are each side's median over its runs\n", abVerdict(rows[0].t))
	}
	if len(r.Steps) == 1 {
		for _, m := range r.Steps[0].Metrics {
			if m.Name == tput {
				abStripChart(w, fmt.Sprintf("%s of each run (%d users)", short, r.Steps[0].Users), m)
			}
		}
	}
	// What the database waited for and what the memory cap cost, where
	// both sides recorded it: the average, as the table's last row.
	for _, m := range r.Average {
		if m.HigherIsBetter || strings.Contains(m.Name, "response time") {
			continue
		}
		fmt.Fprintf(w, "%s, average: A %s, B %s, %s, %s\n", m.Name, abNum(m.A.Median), abNum(m.B.Median), abChange(m), abVerdict(m))
	}
	fmt.Fprintf(w, "largest load: A %s, B %s\n", abNum(analysis.Mean(r.MaxUsersA)), abNum(analysis.Mean(r.MaxUsersB)))
	for _, c := range []struct {
		side string
		c    *results.CacheAccount
	}{{"A", r.CacheA}, {"B", r.CacheB}} {
		if c.c != nil && c.c.CacheServedPct > 0 {
			fmt.Fprintf(w, "%s: the engine's cache served %s %% of reads; %s reads/s reached the device\n", c.side, fixed(c.c.CacheServedPct, 0), fixed(c.c.DeviceReadsPerS, 0))
		}
	}
	return nil
}

// abTooFew says the runs were too few for a verdict on m.
func abTooFew(m results.ABMetric) bool {
	return !m.Significance.Significant() && !m.Significance.WithinNoise && strings.HasPrefix(m.Significance.Verdict, "too few")
}

// abFigure is a figure for the terminal's table: thousands grouped.
func abFigure(v float64) string {
	if math.Abs(v) >= 1000 {
		return thousands(v)
	}
	return abNum(v)
}

// abStripChart draws each side's runs of m as marks on one shared axis,
// a line per side, so that the spread within each side is seen beside the
// gap between them (a digit where runs fall on one place).
func abStripChart(w io.Writer, title string, m results.ABMetric) {
	const width = 50
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range append(append([]float64{}, m.A.Runs...), m.B.Runs...) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, side := range []struct {
		name string
		runs []float64
	}{{"A", m.A.Runs}, {"B", m.B.Runs}} {
		counts := make([]int, width)
		for _, v := range side.runs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			col := 0
			if hi > lo {
				col = int(math.Round((v - lo) / (hi - lo) * (width - 1)))
			}
			counts[col]++
		}
		var line strings.Builder
		for _, n := range counts {
			switch {
			case n == 0:
				line.WriteByte(' ')
			case n == 1:
				line.WriteString("●")
			case n < 10:
				line.WriteString(strconv.Itoa(n))
			default:
				line.WriteByte('+')
			}
		}
		fmt.Fprintf(w, "  %s |%s|\n", side.name, line.String())
	}
	left, right := abFigure(lo), abFigure(hi)
	fmt.Fprintf(w, "    %s%s%s\n", left, strings.Repeat(" ", max(1, width+2-len(left)-len(right))), right)
}

// abSide is a side's median, with its interval where there is one.
func abSide(s results.ABSide) string {
	if s.MedianCI {
		return fmt.Sprintf("%s [%s–%s]", abNum(s.Median), abNum(s.MedianLo), abNum(s.MedianHi))
	}
	return abNum(s.Median)
}

// abChange is the change of the medians in %, with "better" or "worse"
// only where the difference is significant ("higher" or "lower" for a
// figure that is neither better higher nor lower).
func abChange(m results.ABMetric) string {
	text := percentChange(m.A.Median, m.B.Median)
	switch {
	case len(m.A.Runs) == 0 || len(m.B.Runs) == 0:
		text = "-" // not compared: the verdict says why
	case m.NoChangePct && m.A.Median != 0:
		text = "-" // under the figure's floor: the differential says it
	}
	if m.Significance.Significant() && m.Differential != 0 {
		if m.NeitherBetter {
			if m.Differential > 0 {
				return text + ", higher"
			}
			return text + ", lower"
		}
		if (m.Differential > 0) == m.HigherIsBetter {
			return text + ", better"
		}
		return text + ", worse"
	}
	return text
}

// abVerdict says what the runs let one conclude about a difference.
func abVerdict(m results.ABMetric) string {
	s := m.Significance
	switch {
	case s.Significant():
		t := "significant: " + ratio(s.RatioValue())
		if s.RatioInterval {
			t += fmt.Sprintf(" (%.0f %% CI %s–%s)", (1-s.Alpha)*100, ratio(s.RatioLo), ratio(s.RatioHi))
		}
		return t + ", p " + pValue(s.P)
	case s.WithinNoise:
		return "within the runs' own spread (p " + pValue(s.P) + ")"
	case strings.HasPrefix(s.Verdict, "too few"):
		return fmt.Sprintf("too few runs to tell (%d a side needed)", s.NeedPerSide)
	case s.Verdict == "no significant difference":
		return "no significant difference (p " + pValue(s.P) + ")"
	}
	return s.Verdict
}

// pValue writes a p-value: "= 0.008", "< 0.001".
func pValue(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return "= " + strconv.FormatFloat(p, 'f', 3, 64)
}

func abNum(v float64) string {
	if math.Abs(v) >= 100 {
		return fixed(v, 0)
	}
	return fixed(v, 2)
}

func abSigned(v float64) string {
	if v >= 0 {
		return "+" + abNum(v)
	}
	return abNum(v)
}

func loads(vs []float64, open []bool) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fixed(v, 0)
		if i < len(open) && open[i] {
			parts[i] = "≥ " + parts[i]
		}
	}
	return strings.Join(parts, ", ")
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}
