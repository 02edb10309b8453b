package runner

import (
	"fmt"
	"strconv"

	"dbio/internal/results"
)

// Ceiling is the stepping policy of a response-time study (METHODOLOGY.md
// §2): the user count grows step by step until a step's figure passes Max,
// and the load the run reports is the largest user count whose step kept the
// figure at or under Max. Its Stop and Conclude fit Plan.StopWhen and
// Plan.Conclude; it works with any workload whose steps carry the figure.
type Ceiling struct {
	// Figure names the step figure compared, e.g. "interactive_latency_mean".
	Figure string
	Max    float64
	// Unit is the figure's unit, for messages and run.json.
	Unit string
}

// Names of the run-level figures Conclude records.
const (
	FigureMaxUsersUnderCeiling = "max_users_under_ceiling"
	FigureCeiling              = "ceiling"
	FigureCeilingReached       = "ceiling_reached"
)

// Stop ends the run after the first step over the ceiling. A step without
// the figure (none of that kind of transaction completed) counts as over it:
// no response in a whole step is no response time to keep under anything.
func (c Ceiling) Stop(s results.Step) (bool, string) {
	v, ok := s.Figure(c.Figure)
	if !ok {
		return true, fmt.Sprintf("no %s in the step (no such transaction completed), which counts as over the ceiling of %s", c.Figure, c.format(c.Max))
	}
	if v > c.Max {
		return true, fmt.Sprintf("%s %s is over the ceiling of %s", c.Figure, c.format(v), c.format(c.Max))
	}
	return false, ""
}

// Conclude reports the largest user count whose step stayed at or under the
// ceiling (0 when none did), the figure's value there, the ceiling itself,
// and whether the ceiling was reached at all: when it was not, the largest
// load under it is at least the last step's and the run should go further.
func (c Ceiling) Conclude(steps []results.Step, stopped bool) []results.Figure {
	best, at := 0, 0.0
	for _, s := range steps {
		if v, ok := s.Figure(c.Figure); ok && v <= c.Max && s.Users > best {
			best, at = s.Users, v
		}
	}
	reached := 0.0
	if stopped {
		reached = 1
	}
	figs := []results.Figure{
		{Name: FigureMaxUsersUnderCeiling, Value: float64(best), Unit: "users"},
		{Name: FigureCeiling, Value: c.Max, Unit: c.Unit},
		{Name: FigureCeilingReached, Value: reached, Unit: "bool"},
	}
	if best > 0 {
		figs = append(figs, results.Figure{Name: c.Figure + "_at_max_users", Value: at, Unit: c.Unit})
	}
	return figs
}

func (c Ceiling) format(v float64) string {
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if c.Unit != "" {
		s += " " + c.Unit
	}
	return s
}
