package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// A fleet run's timelines: the fleet's line and each host's on one time
// axis, as internal/analysis draws them from the results directory.

// fleetTimelineSection is the section of a fleet run's timelines, nil for
// a run on one machine; the finding says what could not be drawn.
func fleetTimelineSection(r *runView, prefix string) (*section, string) {
	if len(r.Run.Hosts) == 0 && r.Run.Tenants == nil {
		return nil, ""
	}
	sec := &section{ID: prefix + "fleet-timelines", Title: "Fleet and hosts second by second"}
	tls, err := analysis.FleetTimelines(r.Recorded)
	if err != nil {
		sec.add(&paragraph{Class: "note", Text: "No fleet timeline: " + err.Error() + "."})
		return sec, "The fleet's timelines could not be drawn: " + err.Error() + "."
	}
	if len(tls) == 0 {
		return nil, ""
	}
	for _, tl := range tls {
		sec.add(fleetChart(r, tl, prefix+"fleet-"+string(tl.Figure.Name)+"-timeline"))
	}
	return sec, ""
}

// fleetNote says how a fleet timeline is drawn, and by which clock each
// host's seconds are placed.
func fleetNote(tl analysis.FleetTimeline) string {
	note := "The fleet's line (solid) is the sum of the hosts' values in each second all of them measured; each host's line (dashed) is its own, second by second, each step shaded. "
	var offsets, unmeasured []string
	largest := 0.0
	for _, h := range tl.Hosts {
		if off, ok := tl.OffsetsMS[h.Name]; ok {
			offsets = append(offsets, h.Name+" "+signedMillis(off))
			largest = math.Max(largest, math.Abs(off))
		} else {
			unmeasured = append(unmeasured, h.Name)
		}
	}
	if len(offsets) == 0 {
		return note + "The run recorded no host's clock offset against this machine's: each host's seconds are placed by its own clock, as if its offset were 0."
	}
	note += "Each host's seconds are placed on this machine's clock by the offset measured at the start of the run (" + strings.Join(offsets, ", ") + " ms)"
	if largest < 100 {
		note += ", too small to move a line visibly at this scale"
	}
	note += "."
	if len(unmeasured) > 0 {
		note += " No offset was recorded for " + strings.Join(unmeasured, ", ") + ": such a host's seconds are placed by its own clock, as if its offset were 0."
	}
	return note
}

// fleetChart draws one fleet timeline: x is the time since the run
// started, y the figure; a gap separates one step from the next.
func fleetChart(r *runView, tl analysis.FleetTimeline, id string) *chart {
	c := &chart{ID: id, Title: tl.Figure.Title + " per second: the fleet and each host", Note: fleetNote(tl),
		Y: axis{Label: tl.Figure.Title, Unit: tl.Figure.Unit, Zero: true}}
	lines := append([]analysis.FleetLine{tl.Fleet}, tl.Hosts...)
	longest := 0.0
	for _, l := range lines {
		for _, step := range l.Steps {
			for _, s := range step {
				longest = math.Max(longest, s.Time.Sub(r.Run.Started).Seconds())
			}
		}
	}
	scale, unit := 1.0, "s"
	if longest > 1200 {
		scale, unit = 60, "min"
	}
	c.X = axis{Label: "time since the run started", Unit: unit, Tight: true}
	for i, l := range lines {
		s := series{Name: l.Name, Color: i}
		if i > 0 {
			s.Dash = dashed
		}
		for j, step := range l.Steps {
			if j > 0 && len(s.X) > 0 && len(step) > 0 {
				// A gap between steps: lines do not join one step to the next.
				s.X = append(s.X, step[0].Time.Sub(r.Run.Started).Seconds()/scale)
				s.Y = append(s.Y, math.NaN())
			}
			for _, sec := range step {
				s.X = append(s.X, sec.Time.Sub(r.Run.Started).Seconds()/scale)
				s.Y = append(s.Y, sec.Value)
			}
		}
		c.Series = append(c.Series, s)
	}
	var steps []results.Step
	for _, s := range r.Steps {
		if slices.Contains(tl.Steps, s.Name) {
			steps = append(steps, s)
		}
	}
	c.Bands = r.stepBands(steps, func(s results.Step) string { return s.Name }, scale)
	for _, m := range tl.Marks {
		c.Marks = append(c.Marks, mark{X: m.From.Sub(r.Run.Started).Seconds() / scale, Label: "backup " + m.Host,
			Title: fmt.Sprintf("%s: %s, %s s", m.Host, m.What, fixed(m.Seconds, 1))})
	}
	return c
}
