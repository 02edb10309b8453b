package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// An A/B study's table: per step, side A and side B, the differential and
// the improvement in % for each compared figure, their averages over the
// steps, the largest load each side kept, and with several runs a side the
// spread of each side and whether the difference exceeds it.

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
	if err := results.WriteJSON(stem+".json", map[string]any{"result": res, "runs_a": dirsA, "runs_b": dirsB}); err != nil {
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

// ABMarkdown writes an A/B study's tables.
func ABMarkdown(w io.Writer, r results.ABResult) {
	fmt.Fprintf(w, "# A/B: %s vs %s\n\n", r.LabelA, r.LabelB)
	fmt.Fprintf(w, "A: %s (%d runs). B: %s (%d runs). Improvement is B against A, positive when B is better.", r.LabelA, r.RunsA, r.LabelB, r.RunsB)
	multi := r.RunsA > 1 && r.RunsB > 1
	if multi {
		fmt.Fprintf(w, " A difference marks **beyond spread** when A's and B's runs do not overlap.")
	}
	fmt.Fprintf(w, "\n\n")
	for _, name := range abNames(r) {
		fmt.Fprintf(w, "## %s\n\n| users | A | B | differential | improvement |", name)
		if multi {
			fmt.Fprintf(w, " A range | B range | beyond spread |")
		}
		fmt.Fprintf(w, "\n|---:|---:|---:|---:|---:|")
		if multi {
			fmt.Fprintf(w, "---:|---:|:---:|")
		}
		fmt.Fprintln(w)
		for _, s := range r.Steps {
			for _, m := range s.Metrics {
				if m.Name != name {
					continue
				}
				fmt.Fprintf(w, "| %d | %s | %s | %s | %+.0f %% |", s.Users, abNum(m.A.Mean), abNum(m.B.Mean), abSigned(m.Differential), m.ImprovementPct)
				if multi {
					beyond := "no"
					if m.BeyondSpread {
						beyond = "**yes**"
					}
					fmt.Fprintf(w, " %s–%s | %s–%s | %s |", abNum(m.A.Min), abNum(m.A.Max), abNum(m.B.Min), abNum(m.B.Max), beyond)
				}
				fmt.Fprintln(w)
			}
		}
		for _, m := range r.Average {
			if m.Name == name {
				fmt.Fprintf(w, "| **average** | %s | %s | %s | **%+.0f %%** |", abNum(m.A.Mean), abNum(m.B.Mean), abSigned(m.Differential), m.ImprovementPct)
				if multi {
					fmt.Fprintf(w, " | | |")
				}
				fmt.Fprintln(w)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Largest load\n\n| side | per run | mean |\n|---|---|---:|\n")
	fmt.Fprintf(w, "| A %s | %s | %s |\n| B %s | %s | %s |\n\n", r.LabelA, loads(r.MaxUsersA, r.OpenA), abNum(analysis.Mean(r.MaxUsersA)), r.LabelB, loads(r.MaxUsersB, r.OpenB), abNum(analysis.Mean(r.MaxUsersB)))
	if anyTrue(r.OpenA) || anyTrue(r.OpenB) {
		fmt.Fprintf(w, "≥ marks a run that never reached its ceiling: it kept at least that load.\n\n")
	}
	if r.CacheA != nil || r.CacheB != nil {
		fmt.Fprintf(w, "## Where reads were served\n\n| side | engine cache served | reads asked of the OS /s | reads reaching the device /s | device read latency (ms) |\n|---|---:|---:|---:|---:|\n")
		for _, c := range []struct {
			label string
			c     *results.CacheAccount
		}{{"A " + r.LabelA, r.CacheA}, {"B " + r.LabelB, r.CacheB}} {
			if c.c == nil {
				fmt.Fprintf(w, "| %s | - | - | - | - |\n", c.label)
				continue
			}
			served := "-"
			if c.c.OSReadsPerS > 0 || c.c.CacheServedPct > 0 {
				served = fmt.Sprintf("%.0f %%", c.c.CacheServedPct)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f |\n", c.label, served, abNum(c.c.OSReadsPerS), abNum(c.c.DeviceReadsPerS), c.c.DeviceReadAwaitMS)
		}
		fmt.Fprintln(w)
	}
}

// ABText writes an A/B study's headline throughput and mean response time
// per step for a terminal, then the largest loads and where reads were served.
func ABText(w io.Writer, r results.ABResult) error {
	tput, rt := "TPS", analysis.ABName(analysis.ResponseTime(results.StatMean))
	if names := abNames(r); len(names) > 0 {
		tput = names[0]
	}
	words := strings.Fields(tput)
	short := words[len(words)-1]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "users\tA %s\tB %s\tdiff\timprovement\tA ms\tB ms\tdiff\timprovement\t\n", short, short)
	row := func(label string, ms []results.ABMetric) {
		var t, l *results.ABMetric
		for i := range ms {
			switch ms[i].Name {
			case tput:
				t = &ms[i]
			case rt:
				l = &ms[i]
			}
		}
		if t == nil || l == nil {
			return
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.0f %%\t%s\t%s\t%s\t%+.0f %%\t\n", label, abNum(t.A.Mean), abNum(t.B.Mean), abSigned(t.Differential), t.ImprovementPct,
			abNum(l.A.Mean), abNum(l.B.Mean), abSigned(l.Differential), l.ImprovementPct)
	}
	for _, s := range r.Steps {
		row(fmt.Sprint(s.Users), s.Metrics)
	}
	row("average", r.Average)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "largest load: A %s, B %s\n", abNum(analysis.Mean(r.MaxUsersA)), abNum(analysis.Mean(r.MaxUsersB)))
	for _, c := range []struct {
		side string
		c    *results.CacheAccount
	}{{"A", r.CacheA}, {"B", r.CacheB}} {
		if c.c != nil && c.c.CacheServedPct > 0 {
			fmt.Fprintf(w, "%s: the engine's cache served %.0f %% of reads; %.0f reads/s reached the device\n", c.side, c.c.CacheServedPct, c.c.DeviceReadsPerS)
		}
	}
	return nil
}

func abNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
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
		parts[i] = fmt.Sprintf("%.0f", v)
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
