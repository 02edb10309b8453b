package fio

import (
	"math"
	"strings"
	"time"

	"dbio/internal/results"
	"dbio/internal/units"
)

// What a plan's points answer together beyond each point's figures (the
// latency-bounded best points, the I/O-rate curves and their knees) is
// drawn by internal/analysis from the points as the results record them
// (Steps); fio only says which of those questions its plan asks.

// LatencyBound is the configured ceiling on one latency statistic:
// DefaultLatencyMax on the mean for what the configuration leaves out.
func (c Config) LatencyBound() (time.Duration, results.LatencyStat) {
	most, stat := c.LatencyMax, c.LatencyStat
	if most == 0 {
		most = DefaultLatencyMax
	}
	if stat == "" {
		stat = results.StatMean
	}
	return most, stat
}

// LatencyBounded says whether the plan asks for its latency-bounded best
// points: its profile's question (sqlio's), or a bound the user gave.
func (p Plan) LatencyBounded() bool {
	_, ok := p.Profile.(latencyBounded)
	return ok || p.Config.LatencyMax > 0 || p.Config.LatencyStat != ""
}

// latencyBounded marks profiles whose answer is the latency-bounded table,
// shown even without --latency-max.
type latencyBounded interface{ latencyBounded() }

// Steps are points as the results record them, for analysis.
func Steps(points []results.FioPoint) []results.Step {
	out := make([]results.Step, 0, len(points))
	for _, r := range points {
		out = append(out, results.Step{Name: r.Name, Kind: results.KindFio, Status: r.Status, Figures: figures(r), Fio: &r})
	}
	return out
}

// RateFor is the total IOPS limit for pct percent of a measured maximum;
// never below one I/O per second.
func RateFor(maxIOPS, pct float64) int64 {
	return max(1, int64(math.Round(maxIOPS*pct/100)))
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return lines
}

// formatUS renders microseconds as every latency dbio prints.
func formatUS(us float64) string { return units.FormatMicros(us) }

// p99Text is a direction's p99 for a terminal line, or "-" when it has
// none (a fleet point whose hosts logged no common latency histogram):
// never a zero that reads as a latency.
func p99Text(d *results.FioDirection) string {
	if v, ok := d.Completion.At(99); ok {
		return formatUS(v)
	}
	return "-"
}

// groupThousands renders a count with thousands separators: 145,118.
func groupThousands(v float64) string { return units.GroupThousands(int64(math.Round(v))) }
