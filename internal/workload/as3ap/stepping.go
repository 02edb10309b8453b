package as3ap

import (
	"fmt"
	"time"

	"dbio/internal/results"
	"dbio/internal/workload"
)

// Stepping is how an AS3AP run adds interactive users: Start users first,
// Add more each step up to MaxUsers, until the interactive response time's
// CeilingStat passes Ceiling. The command line and a suite file both set it,
// and both run it through these methods alone.
type Stepping struct {
	Start    int               `json:"start" toml:"start"`
	Add      int               `json:"add" toml:"add"`
	MaxUsers int               `json:"max_users" toml:"max_users"`
	Ceiling  workload.Duration `json:"ceiling" toml:"ceiling"`
	// CeilingStat is mean, p95 or p99 of the interactive response time.
	CeilingStat string `json:"ceiling_stat" toml:"ceiling_stat"`
}

// DefaultStepping starts at 1 user, adds 5 a step up to 500, under a 100 ms mean.
func DefaultStepping() Stepping {
	return Stepping{Start: 1, Add: 5, MaxUsers: 500, Ceiling: workload.Duration(100 * time.Millisecond), CeilingStat: "mean"}
}

// Validate reports every bad stepping setting at once.
func (s Stepping) Validate() []error {
	var errs []error
	if s.Start < 1 {
		errs = append(errs, workload.Invalid("start", s.Start, "at least 1 interactive user"))
	}
	if s.Add < 1 {
		errs = append(errs, workload.Invalid("add", s.Add, "add at least 1 user per step"))
	}
	if s.MaxUsers < s.Start || s.MaxUsers > 100000 {
		errs = append(errs, workload.Invalid("max-users", s.MaxUsers, "use a count from --start (%d) to 100000", s.Start))
	}
	if s.Ceiling <= 0 {
		errs = append(errs, workload.Invalid("ceiling", time.Duration(s.Ceiling), "use a positive response time, e.g. 100ms"))
	}
	if _, err := InteractiveFigure(s.CeilingStat); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// Users are the steps' interactive user counts.
func (s Stepping) Users() []int {
	var users []int
	for u := s.Start; s.Add > 0 && u <= s.MaxUsers; u += s.Add {
		users = append(users, u)
	}
	return users
}

// Label shows the stepping in a plan: "1+5..31".
func (s Stepping) Label() string { return fmt.Sprintf("%d+%d..%d", s.Start, s.Add, s.MaxUsers) }

// ceiling is where the stepping stops: the interactive figure of its
// statistic over the ceiling, in ms.
func (s Stepping) ceiling() (results.Ceiling, error) {
	figure, err := InteractiveFigure(s.CeilingStat)
	return results.Ceiling{Figure: figure, Max: float64(s.Ceiling) / float64(time.Millisecond), Unit: "ms", Stat: s.CeilingStat}, err
}

// record is what run.json's config holds of the stepping, beside its users.
type record struct {
	Start       int     `json:"start"`
	Add         int     `json:"add"`
	MaxUsers    int     `json:"max_users"`
	CeilingMS   float64 `json:"ceiling_ms"`
	CeilingStat string  `json:"ceiling_stat"`
}
