package runner

import (
	"context"
	"fmt"
	"time"

	"dbio/internal/results"
)

// Repeats is one run repeated N times, to measure the noise between runs
// of the same configuration: every repeat is a results directory of its
// own inside one repeat set directory, whose manifest lists them.
type Repeats struct {
	// N is the number of repeats (2 or more).
	N int
	// Plan builds the plan of repeat rep (1-based). Each repeat gets a plan
	// of its own, and so a workload value of its own: nothing a run keeps
	// carries into the next. The set takes its name, kind, command and
	// results base from the first; Run's name gets the repeat's number.
	Plan func(rep int) (Plan, error)
}

// RepeatOutcome is what a repeat set produced.
type RepeatOutcome struct {
	// Dir is the set's directory (holding results.RepeatSetFile).
	Dir    string
	Status results.Status
	// Runs are the repeats that started, in order.
	Runs []Outcome
}

// RunRepeated runs the repeats one after the other into one repeat set.
// The first plan is checked before anything is written, and its targets
// are held from the first repeat to the last. A repeat that fails or whose
// consistency check fails ends the set: its figures are not evidence, and
// the next repeats would not measure the same thing.
func RunRepeated(ctx context.Context, r Repeats, env Env) (RepeatOutcome, error) {
	var out RepeatOutcome
	if r.N < 1 {
		return out, &Problems{List: []error{fmt.Errorf("--repeat %d: repeat a run at least once", r.N)}}
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	first, err := r.Plan(1)
	if err != nil {
		return out, err
	}
	release, err := prepareTargets(first, env)
	if err != nil {
		return out, err
	}
	defer release()
	set, err := results.CreateRepeatSet(first.ResultsBase, results.RepeatSet{Name: first.Name, Kind: first.Kind, Command: first.Command, Repeats: r.N}, env.Now())
	if err != nil {
		return out, err
	}
	out.Dir = set.Path
	fmt.Fprintf(env.Out, "repeat set: %s (%d repeats)\n", set.Path, r.N)
	var failure error
	for rep := 1; rep <= r.N && failure == nil; rep++ {
		if ctx.Err() != nil {
			failure = ctx.Err()
			break
		}
		p := first
		if rep > 1 {
			if p, err = r.Plan(rep); err != nil {
				failure = err
				break
			}
		}
		p.Name = fmt.Sprintf("%s-r%d", first.Name, rep)
		p.ResultsBase, p.TargetsHeld = set.Path, true
		fmt.Fprintf(env.Out, "\n=== repeat %d of %d: %s ===\n", rep, r.N, first.Name)
		o, err := Run(ctx, p, env)
		if o.Dir != "" {
			out.Runs = append(out.Runs, o)
			if aerr := set.Add(o.Dir); aerr != nil && err == nil {
				err = aerr
			}
		}
		if err == nil {
			err = failedCheck(o.Checks)
		}
		if err != nil {
			failure = fmt.Errorf("repeat %d of %d: %w", rep, r.N, err)
		}
	}
	out.Status = statusOf(ctx, failure)
	if err := set.Finish(out.Status, failure, env.Now()); err != nil && failure == nil {
		failure = err
	}
	return out, failure
}

// failedCheck is the error of the first consistency check that failed.
func failedCheck(checks []results.Check) error {
	for _, c := range checks {
		if !c.Passed && !c.Skipped {
			return fmt.Errorf("consistency check failed: %s", c.Name)
		}
	}
	return nil
}
