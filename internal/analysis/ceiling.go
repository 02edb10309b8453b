package analysis

import (
	"fmt"
	"strconv"

	"dbio/internal/results"
)

// Ceiling is the stepping policy of a response-time study: the user count
// grows step by step until a step's figure passes Max, and the load the run
// reports is the largest user count whose step kept the figure at or under
// Max. Its Stop and Conclude fit a runner's stop condition and conclusion;
// it works with any workload whose steps carry the figure. A workload gives
// it as a results.Ceiling, converted: analysis.Ceiling(rc).
type Ceiling results.Ceiling

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
		results.FigureMaxUsersUnderCeiling.With(float64(best)),
		// The ceiling is in the unit of the figure it bounds.
		{Name: results.FigureCeiling, Value: c.Max, Unit: c.Unit},
		results.FigureCeilingReached.With(reached),
	}
	if best > 0 {
		figs = append(figs, results.Figure{Name: results.AtMaxUsers(c.Figure), Value: at, Unit: c.Unit})
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

// MaxUsers is a run's largest load: the largest user count kept under its
// ceiling when the run stepped to one, else the largest user count that
// completed. open says the run never reached its ceiling, so its load is a
// lower bound.
func MaxUsers(l *results.Loaded) (users float64, open bool) {
	best, found, reached := 0.0, false, true
	for _, f := range l.Run.Figures {
		switch f.Name {
		case results.FigureMaxUsersUnderCeiling:
			best, found = f.Value, true
		case results.FigureCeilingReached:
			reached = f.Value != 0
		}
	}
	if !found {
		for _, s := range l.Steps {
			if s.Status == results.StatusCompleted && float64(s.Users) > best {
				best = float64(s.Users)
			}
		}
	}
	return best, found && !reached
}

// Verdict is the one line that answers a ceiling run's question, from the
// figures Conclude drew.
func (c Ceiling) Verdict(figs []results.Figure) string {
	v := map[results.FigureName]float64{}
	for _, f := range figs {
		v[f.Name] = f.Value
	}
	users := int(v[results.FigureMaxUsersUnderCeiling])
	switch {
	case users == 0:
		return fmt.Sprintf("largest load under the %g ms %s ceiling: none (the first step was over it)", c.Max, c.Stat)
	case v[results.FigureCeilingReached] == 0:
		return fmt.Sprintf("largest load under the %g ms %s ceiling: at least %d interactive users (%s %.2f ms); the ceiling was not reached, raise --max-users to find it",
			c.Max, c.Stat, users, c.Stat, v[results.AtMaxUsers(c.Figure)])
	default:
		return fmt.Sprintf("largest load under the %g ms %s ceiling: %d interactive users (%s %.2f ms)",
			c.Max, c.Stat, users, c.Stat, v[results.AtMaxUsers(c.Figure)])
	}
}
