package analysis

import (
	"fmt"
	"math"
	"slices"

	"dbio/internal/results"
)

// BlockIOVerdict says what a capture's or a replay's step is against its
// source: "source" for a capture; for a replay at the recorded pace,
// whether it kept up or by how much it fell behind; for one as fast as
// possible, how much faster than the source it went.
func BlockIOVerdict(s results.Step) string {
	b := s.BlockIO
	switch {
	case b == nil:
		return ""
	case s.Kind == results.KindCapture:
		return "source"
	case b.Pace == "max":
		if b.RuntimeS <= 0 {
			return "as fast as possible"
		}
		return fmt.Sprintf("%.2f× the source's pace", b.SourceS/b.RuntimeS)
	case b.KeptUp:
		return "kept up"
	}
	return fmt.Sprintf("fell behind by %.2f s (%.0f %%)", b.BehindS, 100*b.BehindS/max(b.SourceS, 0.001))
}

// BlockIORow is a capture or a replay set beside the others.
type BlockIORow struct {
	// Run is the index of the run among those compared.
	Run  int
	Step results.Step
	// Pace is "captured", "recorded", "recorded ×2", "max".
	Pace    string
	Verdict string
	// IOPSDeviation is the median over the source's busy seconds of how
	// far a replay's IOPS (reads and writes) in that second were from the
	// source's, as a fraction; NaN where it does not apply (the source, a
	// replay not at the recorded pace and speed, or no source among the
	// runs).
	IOPSDeviation float64
}

// BlockIORows lays the captures and replays of runs side by side, in
// their order; a replay's seconds are set against those of the first
// capture among the runs, second by second from each one's first busy one.
func BlockIORows(runs []*Recorded) []BlockIORow {
	var source []float64
	for _, r := range runs {
		if len(r.BlockIO) > 0 && r.BlockIO[0].Kind == results.KindCapture {
			source = busyIOPS(r, r.BlockIO[0])
			break
		}
	}
	var rows []BlockIORow
	for i, r := range runs {
		for _, s := range r.BlockIO {
			row := BlockIORow{Run: i, Step: s, Pace: "captured", Verdict: BlockIOVerdict(s), IOPSDeviation: math.NaN()}
			if s.Kind == results.KindReplay {
				row.Pace = s.BlockIO.Pace
				if s.BlockIO.Pace != "max" && s.BlockIO.Speed != 1 {
					row.Pace = fmt.Sprintf("%s ×%g", s.BlockIO.Pace, s.BlockIO.Speed)
				}
				if s.BlockIO.Pace != "max" && s.BlockIO.Speed == 1 && source != nil {
					row.IOPSDeviation = deviation(source, busyIOPS(r, s))
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// busyIOPS are a step's per-second reads and writes (series.csv), from
// its first second with any; nil when the series is thinned.
func busyIOPS(r *Recorded, s results.Step) []float64 {
	if r.Series.Every > 1 {
		return nil
	}
	rc, wc := r.Series.Column(string(results.FigureReadIOPS)), r.Series.Column(string(results.FigureWriteIOPS))
	var out []float64
	for _, row := range r.Series.Rows {
		if row.Step != s.Name {
			continue
		}
		v := 0.0
		for _, c := range []int{rc, wc} {
			if c >= 0 && !math.IsNaN(row.Values[c]) {
				v += row.Values[c]
			}
		}
		if len(out) == 0 && v == 0 {
			continue
		}
		out = append(out, v)
	}
	return out
}

// deviation is the median relative difference of a replay's IOPS from
// the source's, over the seconds the source had requests.
func deviation(source, replay []float64) float64 {
	var d []float64
	for i := 0; i < len(source) && i < len(replay); i++ {
		if source[i] == 0 {
			continue
		}
		d = append(d, math.Abs(replay[i]-source[i])/source[i])
	}
	if len(d) == 0 {
		return math.NaN()
	}
	slices.Sort(d)
	return d[len(d)/2]
}
