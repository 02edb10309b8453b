package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// Latency beyond one figure per step: the read, write and total rows of
// the fio points that mix reads and writes, DiskSpd's percentile ladder
// for a translated DiskSpd line, and each step's percentile spectrum read
// from the histograms it recorded.

// direction is one row of a mixed point: reads, writes, or both.
type direction struct {
	name string
	d    *results.FioDirection
}

// directions are a mixed point's rows, nil for a point that did not mix.
func directions(p results.Step) []direction {
	if p.Fio == nil || !p.Fio.Mixed() || !analysis.Completed(p) {
		return nil
	}
	return []direction{{"read", p.Fio.Read}, {"write", p.Fio.Write}, {"total", p.Fio.Total}}
}

// percentileName is a percentile as a column heading: "p99.99".
func percentileName(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }

// directionFigures are a direction's IOPS, MB/s and completion latencies
// in ms (mean, SplitPercentiles, max), NaN where fio gave none.
func directionFigures(d *results.FioDirection) []float64 {
	if d == nil {
		out := make([]float64, 4+len(results.SplitPercentiles))
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	c := d.Completion
	out := []float64{d.IOPS, d.MBPerSec(), c.MeanUS / 1000}
	for _, p := range results.SplitPercentiles {
		v, ok := c.At(p)
		if !ok {
			v = math.NaN()
		}
		// fio reads a percentile off its histogram's bin, whose value can
		// lie past the largest latency it measured exactly.
		out = append(out, math.Min(v, c.MaxUS)/1000)
	}
	return append(out, c.MaxUS/1000)
}

// directionsTable gives every mixed point a row for its reads, its writes
// and both together; nil when no point mixed.
func directionsTable(points []results.Step, labels []string, id string) *table {
	t := &table{ID: id, Title: "Reads and writes of the mixed points",
		Caption: "Each point that mixed reads and writes, as DiskSpd reports one: its reads, its writes, and all of its I/Os together (total). Latency is fio's completion latency in ms."}
	multi := len(labels) > 1
	t.Columns = []column{{Name: "point"}}
	if multi {
		t.Columns = append(t.Columns, column{Name: "target"})
	}
	t.Columns = append(t.Columns, column{Name: "I/O"}, column{Name: "IOPS", Numeric: true}, column{Name: "MB/s", Numeric: true},
		column{Name: "mean", Numeric: true, Group: "latency (ms)"})
	for _, p := range results.SplitPercentiles {
		t.Columns = append(t.Columns, column{Name: percentileName(p), Numeric: true, Group: "latency (ms)"})
	}
	t.Columns = append(t.Columns, column{Name: "max", Numeric: true, Group: "latency (ms)"})
	for _, p := range points {
		for i, dir := range directions(p) {
			name := ""
			if i == 0 {
				name = p.Name
			}
			row := []cell{textCell(name)}
			if multi {
				row = append(row, textCell(p.Fio.Label))
			}
			row = append(row, textCell(dir.name))
			for k, v := range directionFigures(dir.d) {
				switch k {
				case 0:
					row = append(row, numCell(v, thousands))
				case 1:
					row = append(row, numCell(v, quantity))
				default:
					row = append(row, numCell(v, millis))
				}
			}
			if dir.name == "total" {
				for c := range row[1:] {
					row[c+1].Class = "key"
				}
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// directionsText prints the rows of directionsTable for a terminal.
func directionsText(w io.Writer, ss []results.Step) error {
	var mixed []results.Step
	for _, s := range ss {
		if directions(s) != nil {
			mixed = append(mixed, s)
		}
	}
	if len(mixed) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nmixed points, reads and writes apart (latency in ms):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "fio point\tI/O\tIOPS\tMB/s\tmean\t")
	for _, p := range results.SplitPercentiles {
		fmt.Fprintf(tw, "%s\t", percentileName(p))
	}
	fmt.Fprintf(tw, "max\t\n")
	for _, s := range mixed {
		for i, dir := range directions(s) {
			name := ""
			if i == 0 {
				name = s.Name
			}
			fmt.Fprintf(tw, "%s\t%s\t", name, dir.name)
			for k, v := range directionFigures(dir.d) {
				switch k {
				case 0:
					fmt.Fprintf(tw, "%s\t", thousands(v))
				case 1:
					fmt.Fprintf(tw, "%s\t", fixed(v, 1))
				default:
					fmt.Fprintf(tw, "%s\t", millis(v))
				}
			}
			fmt.Fprintln(tw)
		}
	}
	return tw.Flush()
}

// pointLatency reads a point's histograms by direction: read, write, and
// total merged from both; an error or a point without histograms reads as none.
type pointLatency struct {
	read, write, total *hdrhistogram.Histogram
}

func readPointLatency(r *analysis.Recorded, p results.Step) (pointLatency, error) {
	lat, err := analysis.ReadStepLatency(r.Loaded, p)
	if err != nil {
		return pointLatency{}, err
	}
	return pointLatency{read: lat.ByKind["read"], write: lat.ByKind["write"], total: lat.All()}, nil
}

// diskSpdRun says the run translated a DiskSpd command line.
func diskSpdRun(r *analysis.Recorded) bool {
	return r.Run.Config.Disk != nil && r.Run.Config.Disk.Dialect == "DiskSpd"
}

// diskSpdLadders are DiskSpd's latency tables, one per point: every rung
// of its ladder for reads, writes and all I/Os, read from the point's
// histograms. Points without histograms have none; a point whose
// histograms cannot be read is named in the note returned.
func diskSpdLadders(r *analysis.Recorded, points []results.Step, id func(string) string) ([]*table, []string) {
	var out []*table
	var unread []string
	for i, p := range points {
		if !analysis.Completed(p) {
			continue
		}
		lat, err := readPointLatency(r, p)
		if err != nil {
			unread = append(unread, err.Error())
			continue
		}
		if lat.total == nil {
			continue
		}
		t := &table{ID: id(fmt.Sprintf("diskspd-latency-%d", i+1)), Title: "Latency percentiles of " + p.Name + ", as DiskSpd prints them",
			Caption: "DiskSpd's -L table: completion latency in ms at each percentile, for reads, writes and all I/Os (total), read from the point's latency histograms (three significant figures; the minimum and maximum are fio's own). A percentile beyond what the point's I/O count can tell apart reads as the maximum, as in DiskSpd."}
		t.Columns = []column{{Name: "%-ile"}, {Name: "read (ms)", Numeric: true}, {Name: "write (ms)", Numeric: true}, {Name: "total (ms)", Numeric: true}}
		ladders := [][]analysis.Percentile{analysis.Ladder(lat.read), analysis.Ladder(lat.write), analysis.Ladder(lat.total)}
		// The minimum and maximum are fio's own, exact where the
		// histograms keep three significant figures from 1 µs up.
		for k, d := range []*results.FioDirection{p.Fio.Read, p.Fio.Write, p.Fio.Total} {
			if l := ladders[k]; l != nil && d != nil && d.Completion.N > 0 {
				lo, hi := d.Completion.MinUS, d.Completion.MaxUS
				for i := range l {
					l[i].US = math.Min(math.Max(l[i].US, lo), hi)
				}
				l[0].US, l[len(l)-1].US = lo, hi
			}
		}
		for k, rung := range analysis.DiskSpdLadder {
			row := []cell{textCell(rung.Name)}
			for _, l := range ladders {
				if l == nil {
					row = append(row, textCell("N/A"))
					continue
				}
				row = append(row, numCell(l[k].US/1000, func(v float64) string { return fixed(v, 3) }))
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
	}
	return out, unread
}

// DiskSpdText prints DiskSpd's latency table of each point of a run that
// translated a DiskSpd line, as DiskSpd prints it under -L; nothing for
// other runs.
func DiskSpdText(w io.Writer, l *results.Loaded) error {
	r := analysis.NewRecorded(l)
	if !diskSpdRun(r) {
		return nil
	}
	tables, unread := diskSpdLadders(r, r.Fio, func(s string) string { return s })
	for _, t := range tables {
		fmt.Fprintf(w, "\n%s:\n", t.Title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		for _, c := range t.Columns {
			fmt.Fprintf(tw, "%s\t", c.Name)
		}
		fmt.Fprintln(tw)
		for _, row := range t.Rows {
			for _, c := range row {
				fmt.Fprintf(tw, "%s\t", c.Text)
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, u := range unread {
		fmt.Fprintf(w, "latency histograms not read: %s\n", u)
	}
	return nil
}

// ninesTicks are the percentile axis's ticks: 0 %, 90 %, 99 %, 99.9 % ...
// up to the largest x (and 90 % at least).
func ninesTicks(maxX float64) []float64 {
	ticks := []float64{1, 10}
	for x := 100.0; x <= maxX; x *= 10 {
		ticks = append(ticks, x)
	}
	return ticks
}

// ninesLabel writes an x of the percentile axis as its percentile, with
// a decimal more for each nine: "20.6%", "99%", "99.93%".
func ninesLabel(x float64) string {
	decimals := max(1, int(math.Floor(math.Log10(x)+1e-9)))
	s := strconv.FormatFloat(ninesPercentile(x), 'f', decimals, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// ninesPercentile is the percentile drawn at x on the percentile axis.
func ninesPercentile(x float64) float64 { return 100 * (1 - 1/x) }

// spectrumAxis is the x axis of a percentile spectrum: the nines, log-scaled.
func spectrumAxis(maxX float64) axis {
	return axis{Label: "percentile", Unit: "%", Log: true, Ticks: ninesTicks(maxX), Format: ninesLabel, Recorded: ninesPercentile}
}

// spectrumSeries is the line of one histogram's spectrum, in ms.
func spectrumSeries(name string, h *hdrhistogram.Histogram, color, dash int) (series, float64) {
	s := series{Name: name, Color: color, Dash: dash}
	maxX := 1.0
	for _, p := range analysis.Spectrum(h) {
		x := analysis.Nines(p.P)
		s.X, s.Y = append(s.X, x), append(s.Y, p.US/1000)
		maxX = math.Max(maxX, x)
	}
	return s, maxX
}

// spectrumNote says how to read a spectrum chart.
const spectrumNote = "The percentile spectrum, as HdrHistogram plots it: each nine takes the same width (90 %, 99 %, 99.9 % ...), so the tail is as visible as the median. A line ends at its step's largest latency, where fewer than one value in the step's count remains."

// spectrumLines is the most lines one spectrum chart draws: beyond it a
// run's steps (a fio profile's dozens of points) or a comparison's runs
// are drawn as small multiples, charts of that many lines each on the
// same kind of axes, since a dozen overlaid tails cannot be told apart.
const spectrumLines = 6

// spectrumChart draws the latency spectrum of a run's steps from the
// histograms they recorded: a line per step, all of its I/Os or
// transactions merged; a run of one step gets a line per kind (reads and
// writes, transaction types) beside the merged one. More steps than
// spectrumLines are drawn as several charts of consecutive steps. It is
// nil when no step recorded a histogram; steps whose histograms cannot be
// read are named in the first chart's note.
func spectrumChart(r *runView, steps []results.Step, cid, what, allName string) []*chart {
	type line struct {
		name        string
		h           *hdrhistogram.Histogram
		color, dash int
	}
	var lines []line
	var unread []string
	for i, s := range steps {
		if s.Status != results.StatusCompleted {
			continue
		}
		lat, err := analysis.ReadStepLatency(r.Loaded, s)
		if err != nil {
			unread = append(unread, s.Name)
			continue
		}
		all := lat.All()
		if all == nil {
			continue
		}
		if len(steps) == 1 && len(lat.Kinds) > 1 {
			for k, kind := range lat.Kinds {
				lines = append(lines, line{kind, lat.ByKind[kind], k + 1, dashed})
			}
			lines = append(lines, line{allName, all, 0, solid})
			continue
		}
		lines = append(lines, line{s.Name, all, i, solid})
	}
	if len(lines) == 0 {
		return nil
	}
	perChart := len(lines)
	if len(steps) > 1 && len(lines) > spectrumLines {
		perChart = spectrumLines
	}
	var out []*chart
	for from := 0; from < len(lines); from += perChart {
		part := lines[from:min(from+perChart, len(lines))]
		c := &chart{ID: cid, Title: "Latency spectrum", Note: spectrumNote, Y: axis{Label: what + " latency", Unit: "ms", Zero: true}}
		if perChart < len(lines) {
			if from > 0 {
				c.ID = fmt.Sprintf("%s-%d", cid, from/perChart+1)
			}
			c.Title = fmt.Sprintf("Latency spectrum, %s to %s (%d–%d of %d)", part[0].name, part[len(part)-1].name, from+1, from+len(part), len(lines))
			if from == 0 {
				c.Note += fmt.Sprintf(" The %d steps are drawn %d to a chart, each chart on axes of its own.", len(lines), perChart)
			}
		}
		maxX := 1.0
		for i, l := range part {
			color := l.color
			if perChart < len(lines) {
				color = i // each chart's lines in the palette's first colors
			}
			s, x := spectrumSeries(l.name, l.h, color, l.dash)
			maxX = math.Max(maxX, x)
			c.Series = append(c.Series, s)
		}
		c.X = spectrumAxis(maxX)
		autoLog(c)
		out = append(out, c)
	}
	if len(steps) == 1 && len(lines) > 1 {
		out[0].Note += " Each kind dashed, all of them merged solid."
	}
	if len(unread) > 0 {
		out[0].Note += " Not drawn, their histograms unreadable: " + strings.Join(unread, ", ") + "."
	}
	return out
}

// spectrumFiles are the histogram files the runs' spectra are drawn from,
// as paths inside a results directory with the step's directory as *:
// "steps/*/latency-read.hdr". The latency from the intended start
// (…-corrected.hdr) is not in the spectrum and not named.
func spectrumFiles(runs []*runView) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range runs {
		if r.Loaded == nil {
			continue
		}
		for _, s := range r.Steps {
			rel, err := filepath.Rel(r.Path, results.StepPath(r.Path, s.Index, s.Name))
			if err != nil {
				continue
			}
			entries, err := results.ReadDirIn(r.Path, rel)
			if err != nil {
				continue
			}
			for _, e := range entries {
				n := e.Name()
				if !strings.HasPrefix(n, "latency-") || !strings.HasSuffix(n, ".hdr") || strings.HasSuffix(n, results.CorrectedSuffix+".hdr") {
					continue
				}
				if f := "steps/*/" + n; !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// compareSpectra draws one spectrum chart per step the runs have in
// common, a line per run (all of the step's I/Os or transactions
// merged); a step that fewer than two runs recorded histograms for has
// none. More runs than four (the line styles there are) are drawn as
// several charts per step, each of run A and three others.
func compareSpectra(runs []*runView, rows []analysis.Row, id func(string) string, step func(label string) string, what string) []*chart {
	const perChart = 4
	var out []*chart
	for ri, row := range rows {
		type line struct {
			run int
			h   *hdrhistogram.Histogram
		}
		var lines []line
		for i, s := range row.Steps {
			if s == nil || s.Status != results.StatusCompleted {
				continue
			}
			lat, err := analysis.ReadStepLatency(runs[i].Loaded, *s)
			if err != nil {
				continue
			}
			if all := lat.All(); all != nil {
				lines = append(lines, line{i, all})
			}
		}
		if len(lines) < 2 {
			continue
		}
		// Each chart is the first run's line and up to three others.
		first, others := lines[0], lines[1:]
		parts := (len(others) + perChart - 2) / (perChart - 1)
		for p := range parts {
			part := append([]line{first}, others[p*(perChart-1):min((p+1)*(perChart-1), len(others))]...)
			c := &chart{ID: id(fmt.Sprintf("spectrum-%d", ri+1)), Title: "Latency spectrum, " + step(row.Label),
				Note: spectrumNote + " Run A solid, B dashed, C dotted, D dash-dot.", Y: axis{Label: what + " latency", Unit: "ms", Zero: true}}
			if parts > 1 {
				c.ID = id(fmt.Sprintf("spectrum-%d-%d", ri+1, p+1))
				var letters []string
				for _, l := range part {
					letters = append(letters, runs[l.run].Letter)
				}
				c.Title += fmt.Sprintf(", runs %s (%d of %d)", strings.Join(letters, ", "), p+1, parts)
				c.Note = spectrumNote + fmt.Sprintf(" %s solid, then dashed, dotted and dash-dot in the legend's order; the %d runs are drawn %s and three others to a chart.", runs[first.run].Letter, len(lines), runs[first.run].Letter)
			}
			maxX := 1.0
			for k, l := range part {
				style := l.run
				if parts > 1 {
					style = k
				}
				s, x := spectrumSeries(runs[l.run].Letter, l.h, style, style)
				maxX = math.Max(maxX, x)
				c.Series = append(c.Series, s)
			}
			c.X = spectrumAxis(maxX)
			autoLog(c)
			out = append(out, c)
		}
	}
	return out
}
