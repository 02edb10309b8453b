package runner

import (
	"context"
	"fmt"
	"time"

	"dbio/internal/fio"
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
	// Disk, given instead of Plan, builds the plan of a disk run's repeat
	// (dbio disk --repeat N), read the same way.
	Disk func(rep int) (DiskPlan, error)
}

// RepeatOutcome is what a repeat set produced.
type RepeatOutcome struct {
	// Dir is the set's directory (holding results.RepeatSetFile).
	Dir    string
	Status results.Status
	// Runs are the repeats that started, in order.
	Runs []Outcome
}

// repeatable is one repeat's run, whichever kind it is: what the set takes
// from it, how its targets are held for the whole set, and how it runs
// under its repeat's name inside the set's directory.
type repeatable struct {
	name, kind, base string
	command          []string
	// hold checks the run before anything is written and takes its
	// targets; the release is called after the last repeat.
	hold func(ctx context.Context, env Env) (release func(), err error)
	run  func(ctx context.Context, name, base string, env Env) (Outcome, error)
}

func (r Repeats) repeat(rep int) (repeatable, error) {
	if r.Disk != nil {
		p, err := r.Disk(rep)
		if err != nil {
			return repeatable{}, err
		}
		return repeatable{name: p.Name, kind: kindDisk, base: p.ResultsBase, command: p.Command,
			hold: func(_ context.Context, env Env) (func(), error) {
				if _, err := fio.NewPlan(p.Fio.Config, fio.BuiltinProfiles()); err != nil {
					return nil, &Problems{List: []error{err}}
				}
				if p.Fio.Config.Fleet() {
					return func() {}, nil // each repeat holds its hosts' targets itself, over ssh
				}
				return LockTargets(env.SysFS, p.Fio.Config.Targets, p.CreateTargets, Holder(p.Command, env.Now()))
			},
			run: func(ctx context.Context, name, base string, env Env) (Outcome, error) {
				p.Name, p.ResultsBase, p.TargetsHeld = name, base, true
				o, err := RunDisk(ctx, p, env)
				return Outcome{Dir: o.Dir, Status: o.Status}, err
			},
		}, nil
	}
	p, err := r.Plan(rep)
	if err != nil {
		return repeatable{}, err
	}
	return repeatable{name: p.Name, kind: p.Kind, base: p.ResultsBase, command: p.Command,
		hold: func(ctx context.Context, env Env) (func(), error) { return prepareTargets(ctx, p, env) },
		run: func(ctx context.Context, name, base string, env Env) (Outcome, error) {
			p.Name, p.ResultsBase, p.TargetsHeld = name, base, true
			return Run(ctx, p, env)
		},
	}, nil
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
	if (r.Plan == nil) == (r.Disk == nil) {
		return out, fmt.Errorf("a repeat set needs either a run's plan or a disk run's")
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	first, err := r.repeat(1)
	if err != nil {
		return out, err
	}
	release, err := first.hold(ctx, env)
	if err != nil {
		return out, err
	}
	defer release()
	set, err := results.CreateRepeatSet(first.base, results.RepeatSet{Name: first.name, Kind: first.kind, Command: first.command, Repeats: r.N}, env.Now())
	if err != nil {
		return out, err
	}
	out.Dir = set.Path
	fmt.Fprintf(env.Out, "repeat set: %s (%d repeats)\n", set.Path, r.N)
	var failure error
	var took []time.Duration
	for rep := 1; rep <= r.N && failure == nil; rep++ {
		if ctx.Err() != nil {
			failure = ctx.Err()
			break
		}
		this := first
		if rep > 1 {
			if this, err = r.repeat(rep); err != nil {
				failure = err
				break
			}
		}
		fmt.Fprintf(env.Out, "\n=== repeat %d of %d: %s ===\n", rep, r.N, first.name)
		if left, each := repeatsLeft(took, r.N-rep+1); left > 0 {
			fmt.Fprintf(env.Out, "about %s left in the repeat set: %d repeat(s) of about %s, as the repeats so far took\n", left.Round(time.Second), r.N-rep+1, each.Round(time.Second))
		}
		began := env.Now()
		o, err := this.run(ctx, fmt.Sprintf("%s-r%d", first.name, rep), set.Path, env)
		took = append(took, env.Now().Sub(began))
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

// repeatsLeft is the time left of a repeat set with n repeats to go, each
// taken to last as long as the repeats so far did on average; nothing
// before one has run.
func repeatsLeft(took []time.Duration, n int) (left, each time.Duration) {
	if len(took) == 0 {
		return 0, 0
	}
	var sum time.Duration
	for _, d := range took {
		sum += d
	}
	each = sum / time.Duration(len(took))
	return time.Duration(n) * each, each
}
