package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"dbio/internal/results"
)

// A comparison run until decided stopped where its sequential test let it:
// the report shows every look (the runs a side so far, the statistic and
// the boundary it had to reach), so that a reader sees why the study took
// the runs it took and not just the verdict.

// sequentialSentence says in one line where a comparison run until
// decided stopped: its verdict, after how many runs a side of its most.
func sequentialSentence(s results.SuiteSequential) string {
	what := s.Figure
	if what == "" {
		what = "the headline figure"
	}
	stop := "stopped"
	if !s.Decided {
		stop = "ran out of runs"
	}
	return fmt.Sprintf("%s (%s against %s, %s, until decided): %s after %s a side of at most %d (%s).",
		orDash(s.Group), orDash(s.B), orDash(s.A), what, s.Verdict, plural(s.RunsPerSide, "run", "runs"), s.MaxPerSide, stop)
}

// lookBoundary is the |Z| a look had to reach to call a difference, or
// why none could be called there.
func lookBoundary(l results.ABLook) string {
	if l.Bound == nil {
		return "none yet"
	}
	return "±" + strconv.FormatFloat(*l.Bound, 'f', 2, 64)
}

// lookRatio is a look's interval of B / A, "-" when there was none.
func lookRatio(l results.ABLook) string {
	if l.RatioLo == nil || l.RatioHi == nil {
		return "-"
	}
	return ratio(*l.RatioLo) + " to " + ratio(*l.RatioHi)
}

// lookFigures lists one side's figures at a look, in run order.
func lookFigures(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = quantity(x)
	}
	return strings.Join(parts, ", ")
}

// sequentialTable is a comparison's looks, one row a look; the last row
// says where the study stopped and on what.
func sequentialTable(id string, s results.SuiteSequential) *table {
	t := &table{ID: id, Title: "Sequential looks: " + orDash(s.Group),
		Caption: fmt.Sprintf("After each pair of runs the sides' %s were compared: the Mann-Whitney statistic Z (positive: %s above %s) against the boundary its |Z| had to reach to call a difference (none before enough runs a side), which keeps the chance of calling a difference that is not there at %s over every look; the interval of %s / %s is the one the margin of %s is judged by.",
			orDash(s.Figure), orDash(s.B), orDash(s.A), percent(100*s.Alpha)+" %", orDash(s.B), orDash(s.A), percent(s.MarginPct)+" %")}
	t.Columns = []column{{Name: "runs a side"}, {Name: s.A + " (a)", Wrap: true}, {Name: s.B + " (b)", Wrap: true}, {Name: "Z"}, {Name: "boundary"}, {Name: "b / a"}, {Name: "look"}}
	for i, l := range s.Looks {
		outcome := "go on"
		if i == len(s.Looks)-1 {
			outcome = "stopped: " + s.Verdict
		}
		t.Rows = append(t.Rows, []cell{textCell(strconv.Itoa(l.N)), textCell(lookFigures(l.A)), textCell(lookFigures(l.B)),
			numCell(l.Z, func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }), textCell(lookBoundary(l)), textCell(lookRatio(l)), textCell(outcome)})
	}
	return t
}

// SequentialText prints, for the terminal, where each comparison run until
// decided stopped.
func SequentialText(w io.Writer, seqs []results.SuiteSequential) error {
	if len(seqs) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\ncomparisons run until decided:\n")
	for _, s := range seqs {
		fmt.Fprintf(&b, "  %s\n", sequentialSentence(s))
		for _, l := range s.Looks {
			fmt.Fprintf(&b, "    %s a side: Z %.2f, boundary %s\n", plural(l.N, "run", "runs"), l.Z, lookBoundary(l))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
