// Package report renders results directories: the terminal summary, the
// self-contained HTML report, Markdown and CSV, and comparisons of runs.
// Everything here reads a results directory and nothing else.
package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/units"
)

// Text writes the end-of-run summary for a terminal.
func Text(w io.Writer, l *results.Loaded, opts Options) error {
	r := l.Run
	fmt.Fprintf(w, "\n== dbio %s: %s ==\n", r.Kind, strings.ToUpper(string(r.Status)))
	// Tenants of a noisy-neighbour run are several instances of one engine.
	var engines []string
	count := map[string]int{}
	for _, e := range r.Engines {
		key := e.Engine + " " + e.Version
		if count[key] == 0 {
			engines = append(engines, key)
		}
		count[key]++
	}
	for _, key := range engines {
		if n := count[key]; n > 1 {
			fmt.Fprintf(w, "engine:  %s (%d instances)\n", key, n)
		} else {
			fmt.Fprintf(w, "engine:  %s\n", key)
		}
	}
	shown := map[string]bool{}
	for _, t := range r.Environment.Targets {
		// fio and the engine both record the target they used; show it once.
		if key := string(t.Role) + "\x00" + t.Path; shown[key] {
			continue
		} else {
			shown[key] = true
		}
		if t.Host != "" {
			fmt.Fprintf(w, "target:  %s (%s) on host %s\n", t.Path, t.Role, t.Host)
			continue
		}
		dev := t.Storage.Device
		if len(t.Storage.Physical) > 0 {
			names := make([]string, len(t.Storage.Physical))
			for i, d := range t.Storage.Physical {
				names[i] = d.Name
			}
			dev = strings.Join(names, "+")
		}
		if dev == "" {
			dev = "no block device"
		}
		limit := ""
		if t.Limit != nil {
			limit = ", " + t.Limit.Describe()
		}
		fmt.Fprintf(w, "target:  %s (%s) %s on %s%s, %s free\n", t.Path, t.Role, t.Storage.FSType, dev, limit, t.FreeText())
	}
	for _, e := range r.Engines {
		if m := e.MemoryLimit; m != nil {
			fmt.Fprintf(w, "memory:  server capped at %s, page cache included (%s)\n", units.FormatBytes(uint64(m.Bytes)), m.Mechanism)
			break
		}
	}
	if ld := r.Load; ld != nil {
		if reset := dataReset(ld); reset != "" {
			fmt.Fprintf(w, "load:    %s: %s\n", reset, scaleText(ld.Scale, scaleUnit(ld, r.Config)))
		} else if ld.Reused {
			fmt.Fprintf(w, "load:    reused the existing dataset (%s)%s\n", scaleText(ld.Scale, scaleUnit(ld, r.Config)), dataReused(ld))
		} else {
			kept := fixed(ld.MBPerSec, 1) + " MB/s kept on disk"
			if ld.BytesWritten == 0 {
				kept = "size on disk unknown: the server is not on a target dbio manages"
			}
			unit := scaleUnit(ld, r.Config)
			fmt.Fprintf(w, "load:    %s, %s rows in %s s (%s rows/s, %s %s/min, %s)\n",
				scaleText(ld.Scale, unit), thousands(float64(ld.Rows)), fixed(ld.Seconds, 1), thousands(ld.RowsPerSec), quantity(ld.ScalePerMin), unit, kept)
			if k := pristineKept(ld); k != "" {
				fmt.Fprintf(w, "         %s\n", k)
			}
		}
	}
	if err := stepTables(w, l.Steps); err != nil {
		return err
	}
	tenantsText(w, r, l.Steps)
	for _, s := range analysis.NewRecorded(l).BlockIO {
		fmt.Fprintf(w, "\n%s\n", blockIOFinding(s))
	}
	for _, wl := range analysis.NewRecorded(l).Workloads {
		if f := warmupFinding(opts.title(wl.Kind), wl.Steps); f != "" {
			fmt.Fprintf(w, "\nwarm-up: %s\n", f)
		}
		if f := precisionFinding(opts.title(wl.Kind), wl.Steps); f != "" {
			fmt.Fprintf(w, "\nprecision: %s\n", f)
		}
	}
	if analysis.Paced(l.Steps) {
		fmt.Fprintf(w, "\n%s\n", correctedLegend)
		for _, f := range analysis.PacingFindings(l.Steps) {
			fmt.Fprintln(w, f)
		}
	}
	if r.Goal != nil {
		fmt.Fprintf(w, "\ngoal:    %s\n", analysis.GoalAnswer(r.Goal))
	}
	if demand := demandFindings(analysis.NewRecorded(l), opts.title); len(demand) > 0 {
		fmt.Fprintln(w)
		for _, d := range demand {
			fmt.Fprintln(w, d)
		}
	}
	if len(r.Figures) > 0 {
		fmt.Fprintln(w)
		for _, f := range r.Figures {
			fmt.Fprintf(w, "%s: %s %s\n", f.Name.Def().Title, number(f.Value), f.Unit)
		}
	}
	if n := len(r.Fragmentation); n > 1 {
		first, last := r.Fragmentation[0], r.Fragmentation[n-1]
		fmt.Fprintf(w, "\nfragmentation: %d extents in %d files after the load, %d at the end (%+d)\n", first.Extents, first.Files, last.Extents, last.Extents-first.Extents)
	}
	if len(r.Checks) > 0 {
		failed := 0
		for _, c := range r.Checks {
			if !c.Passed && !c.Skipped {
				failed++
			}
		}
		if failed > 0 {
			fmt.Fprintf(w, "\n!!! CONSISTENCY CHECK FAILED: %d of %d conditions violated !!!\n", failed, len(r.Checks))
		} else {
			fmt.Fprintln(w, "\nconsistency:")
		}
		for _, c := range r.Checks {
			verdict := "pass"
			switch {
			case c.Skipped:
				verdict = "SKIPPED"
			case !c.Passed:
				verdict = "FAIL"
			}
			line := fmt.Sprintf("  %-7s %s", verdict, c.Name)
			if c.Detail != "" {
				line += " (" + c.Detail + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "\n%s: %s\n", r.Status, r.Error)
	}
	fmt.Fprintf(w, "\nresults: %s\n", l.Path)
	return nil
}

// stepTables prints one table per kind of step, in the order they ran.
func stepTables(w io.Writer, steps []results.Step) error {
	var kinds []string
	byKind := map[string][]results.Step{}
	for _, s := range steps {
		if _, ok := byKind[s.Kind]; !ok {
			kinds = append(kinds, s.Kind)
		}
		byKind[s.Kind] = append(byKind[s.Kind], s)
	}
	for _, k := range kinds {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		ss := byKind[k]
		switch {
		case ss[0].Total != nil:
			workloadTable(tw, ss)
		case k == results.KindFio:
			fioTable(tw, ss)
		default:
			figureTable(tw, ss)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if k == results.KindFio {
			if err := directionsText(w, ss); err != nil {
				return err
			}
		}
		if ss[0].Total != nil {
			verdictText(w, ss)
			if err := dbWaitText(w, ss); err != nil {
				return err
			}
			if err := serverMemoryText(w, ss); err != nil {
				return err
			}
		}
	}
	return nil
}

// verdictText prints each step's bottleneck verdict, with the figures
// that prove it.
func verdictText(w io.Writer, ss []results.Step) {
	first := true
	for _, s := range ss {
		if s.Telemetry == nil || s.Telemetry.Verdict.Text == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nbottleneck:")
			first = false
		}
		fmt.Fprintf(w, "  %s: %s\n", s.Name, s.Telemetry.Verdict.Text)
	}
}

// correctedLegend explains the corr and svc columns of an open-loop table.
const correctedLegend = "Latencies in ms: corr from each transaction's intended start on the schedule, so it includes any wait behind a slow or stalled database (corrected for coordinated omission); svc from its actual start, the service time a closed-loop driver reports."

// dbWaitText prints the I/O latency the database measured itself beside
// the busiest device's await, when its engine timed any.
func dbWaitText(w io.Writer, ss []results.Step) error {
	kinds := analysis.DBWaitRecorded(ss)
	if len(kinds) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nI/O latency, ms per operation: as the database saw it, and the busiest device's await")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "step\tusers\t")
	for _, k := range kinds {
		fmt.Fprintf(tw, "db %s\t", k.Title)
	}
	fmt.Fprintf(tw, "disk read\tdisk write\t\n")
	value := func(v float64) string { return fixed(v, 3) }
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t%d\t", s.Name, s.Users)
		for _, k := range kinds {
			fmt.Fprintf(tw, "%s\t", value(analysis.DBWait(s, k.Key)))
		}
		r, wr := math.NaN(), math.NaN()
		if d := analysis.BusiestDevice(s.Telemetry); d != "" {
			r, wr = s.Telemetry.Mean(analysis.DiskMetric(d, "r_await_ms")), s.Telemetry.Mean(analysis.DiskMetric(d, "w_await_ms"))
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", value(r), value(wr))
	}
	return tw.Flush()
}

// workloadTable prints the figures of transaction steps, one row per user
// count. Open-loop steps add their offered and achieved rates and late
// starts, and show each percentile from the intended start (corr) beside
// the service time (svc).
func workloadTable(tw io.Writer, ss []results.Step) {
	names := figureNames(ss, map[results.FigureName]bool{results.FigureLatencyP99: true, results.FigureLatencyP99Corrected: true})
	paced := analysis.Paced(ss)
	fmt.Fprintf(tw, "step\tusers\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n.Def().Heading())
	}
	if paced {
		fmt.Fprintf(tw, "offered/s\tachieved/s\tlate\tp50 corr\tp50 svc\tp95 corr\tp95 svc\tp99 corr\tp99 svc\terrors\t status\t\n")
	} else {
		fmt.Fprintf(tw, "p50 ms\tp95 ms\tp99 ms\terrors\t status\t\n")
	}
	formats := columnFormats(ss, names)
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t%d\t", s.Name, s.Users)
		for _, n := range names {
			if v, ok := s.Figure(n); ok {
				fmt.Fprintf(tw, "%s\t", formats[n](v))
			} else {
				fmt.Fprintf(tw, "-\t")
			}
		}
		lat := s.Total.Latency
		if !paced {
			fmt.Fprintf(tw, "%.2f\t%.2f\t%.2f\t%d\t %s\t\n", ms(lat.P50US), ms(lat.P95US), ms(lat.P99US), s.Total.Errors, s.Status)
			continue
		}
		p, corr := s.Pacing, s.Total.Corrected
		if p == nil || corr == nil {
			fmt.Fprintf(tw, "-\t-\t-\t-\t%.2f\t-\t%.2f\t-\t%.2f\t%d\t %s\t\n", ms(lat.P50US), ms(lat.P95US), ms(lat.P99US), s.Total.Errors, s.Status)
			continue
		}
		achieved := number(p.AchievedTPS)
		if analysis.RateShort(s) {
			achieved += " SHORT"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t %s\t\n", number(p.OfferedTPS), achieved, p.Late,
			ms(corr.P50US), ms(lat.P50US), ms(corr.P95US), ms(lat.P95US), ms(corr.P99US), ms(lat.P99US), s.Total.Errors, s.Status)
	}
}

// fioTable prints fio points for people: IOPS and MB/s with separators,
// latencies in ms like every other latency dbio prints, read and write
// IOPS only where a point mixed them; fio's own CPU and steady-state
// figures stay in the report.
func fioTable(tw io.Writer, ss []results.Step) {
	mixed, spread := false, false
	for _, s := range ss {
		_, r := s.Figure(results.FigureReadIOPS)
		_, w := s.Figure(results.FigureWriteIOPS)
		_, sd := s.Figure(results.FigureIOPSStdev)
		mixed, spread = mixed || (r && w), spread || sd
	}
	// shown leaves out the per-direction IOPS of points that did not mix,
	// and the IOPS spread of points recorded without it.
	shown := func(name results.FigureName) bool {
		switch name {
		case results.FigureReadIOPS, results.FigureWriteIOPS:
			return mixed
		case results.FigureIOPSStdev:
			return spread
		}
		return true
	}
	// Latencies are recorded in µs and shown in ms.
	cols := []struct {
		name  results.FigureName
		scale float64
	}{{results.FigureIOPS, 1}, {results.FigureIOPSStdev, 1}, {results.FigureReadIOPS, 1}, {results.FigureWriteIOPS, 1},
		{results.FigureMBPerSec, 1}, {results.FigureLatMeanUS, 1e-3}, {results.FigureLatP50US, 1e-3},
		{results.FigureLatP99US, 1e-3}, {results.FigureLatP999US, 1e-3}, {results.FigureLatMaxUS, 1e-3}}
	fmt.Fprintf(tw, "fio point	")
	for _, c := range cols {
		if !shown(c.name) {
			continue
		}
		head := c.name.Def().Heading()
		if c.scale != 1 {
			head += " ms"
		}
		fmt.Fprintf(tw, "%s\t", head)
	}
	fmt.Fprintf(tw, " status\t\n")
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t", s.Name)
		for _, c := range cols {
			if !shown(c.name) {
				continue
			}
			v, ok := s.Figure(c.name)
			switch {
			case !ok:
				fmt.Fprintf(tw, "-\t")
			case c.scale != 1:
				fmt.Fprintf(tw, "%s\t", millis(v*c.scale))
			default:
				fmt.Fprintf(tw, "%s\t", number(math.Round(v)))
			}
		}
		fmt.Fprintf(tw, " %s\t\n", s.Status)
	}
}

// figureTable prints steps that carry only figures (backups and the like).
func figureTable(tw io.Writer, ss []results.Step) {
	names := figureNames(ss, nil)
	fmt.Fprintf(tw, "%s point\t", ss[0].Kind)
	units := map[results.FigureName]string{}
	for _, s := range ss {
		for _, f := range s.Figures {
			units[f.Name] = f.Unit
		}
	}
	for _, n := range names {
		head, unit := n.Def().Heading(), units[n]
		if unit != "" && unit != head {
			head += " (" + unit + ")"
		}
		fmt.Fprintf(tw, "%s\t", head)
	}
	fmt.Fprintf(tw, " status\t\n")
	formats := columnFormats(ss, names)
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t", s.Name)
		for _, n := range names {
			v, ok := s.Figure(n)
			if ok {
				fmt.Fprintf(tw, "%s\t", formats[n](v))
			} else {
				fmt.Fprintf(tw, "-\t")
			}
		}
		fmt.Fprintf(tw, " %s\t\n", s.Status)
	}
}

// columnFormats is each figure's format, one for its whole column.
func columnFormats(ss []results.Step, names []results.FigureName) map[results.FigureName]func(float64) string {
	out := map[results.FigureName]func(float64) string{}
	for _, n := range names {
		var vs []float64
		for _, s := range ss {
			if v, ok := s.Figure(n); ok {
				vs = append(vs, v)
			}
		}
		out[n] = throughputFormat(vs)
	}
	return out
}

func figureNames(ss []results.Step, skip map[results.FigureName]bool) []results.FigureName {
	seen := map[results.FigureName]bool{}
	var names []results.FigureName
	for _, s := range ss {
		for _, f := range s.Figures {
			if !seen[f.Name] && !skip[f.Name] {
				seen[f.Name] = true
				names = append(names, f.Name)
			}
		}
	}
	return names
}

func ms(us int64) float64 { return float64(us) / 1000 }

// number prints large figures with thousands separators and small ones with decimals.
func number(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case math.Abs(v) >= units.Huge:
		return units.FormatHuge(v)
	case v >= 1000 || v <= -1000:
		return units.GroupThousands(int64(math.RoundToEven(v)))
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
