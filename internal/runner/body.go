package runner

import (
	"context"
	"fmt"
	"time"

	"dbio/internal/engine"
	"dbio/internal/results"
)

// Body is what a run does once its setup is done: the user steps (Steps),
// a latency goal search (Goal), backup cycles (Backups), the
// noisy-neighbour study (Noisy) or tenants on several hosts (Tenants). A
// body says what it needs of the setup, describes itself for the plan line,
// records its part of run.json's config, and runs its phases in the
// session the setup made, recording its steps and checks there.
type Body interface {
	// needs is what the body asks of the setup and of this machine.
	needs() needs
	// describe says what the body does, for the plan line; s is the
	// setup it runs in.
	describe(s Setup) string
	// configure records the body's part of run.json's config.
	configure(c *results.RunConfig)
	// run runs the body's phases in the session.
	run(ctx context.Context, ss *session) error
}

// needs is what a body asks of its run's setup and of this machine, known
// before anything starts: the preflight judges it, the setup provides it.
type needs struct {
	// engine says the setup starts the plan's engine and prepares its
	// workload for the body; a body that does not ask starts the servers it
	// needs itself, or runs none here.
	engine bool
	// servers is how many servers the body runs on this machine, each with
	// files and memory of its own: none for tenants on hosts, whose own
	// dbio judges theirs.
	servers int
	// users are the users of each step as one server sees them; openLoop
	// says they run open loop, each with a connection of its own.
	users    []int
	openLoop bool
	// steps is how many steps the body writes, each of stepTime, for the
	// space of its results.
	steps    int
	stepTime time.Duration
	// steady is the steps' ramp-up until steady state, at most rampUp
	// long, which the workload's figures must be able to judge.
	steady *SteadyRampUp
	rampUp time.Duration
	// precision ends each measurement once its figures are precise, at
	// most step long; paced says the steps run open loop.
	precision *PrecisionBound
	step      time.Duration
	paced     bool
	// subdirs are dbio's subdirectories of the data target the body uses
	// beside the engine's.
	subdirs []string
	// elsewhere, when set, checks before anything is written what the
	// body uses on other hosts; targets are those, for run.json.
	elsewhere func(ctx context.Context) error
	targets   []results.TargetInfo
}

// needs is what p's body asks of its setup; a plan without a body asks nothing.
func (p Plan) needs() needs {
	if p.Body == nil {
		return needs{}
	}
	return p.Body.needs()
}

// session is a run between its setup and its end: what the setup made,
// which the body runs its phases in.
type session struct {
	Setup
	env Env
	dir *results.Dir
	pl  engine.Placement
	// first is the index of the body's first step: the fio pass's points
	// come before it.
	first int
	// opts are the engine's options as the setup resolved them: its log
	// directory, its notices, the caps on its storage and memory.
	opts engine.Options
	// memory is the cap on the servers' memory, nil without one.
	memory *results.MemoryLimit
	// applyLimits makes the storage-class caps bind, once the servers have
	// started and loaded; nil when the body starts none.
	applyLimits func() error
	// liftLimits takes the storage-class caps off again once the body's
	// measured phases are over; nil when nothing was capped.
	liftLimits func() error
	// inst is the engine the setup started, its workload prepared; nil
	// when the body asked for none.
	inst engine.Instance
	out  *Outcome
}

// newRecording is where a body writes, sampling the placement's disks and
// the instance's processes; telemetry that cannot start is a warning.
func (ss *session) newRecording(pl engine.Placement, inst engine.Instance) recording {
	rec := recording{Tick: ss.Tick, Dir: ss.dir, FirstIndex: ss.first, Now: ss.env.Now, Log: ss.env.Out, Live: ss.env.Live}
	sampler, err := newSampler(ss.env, pl, inst, ss.EngineOptions.DSN != "")
	if err != nil {
		_ = ss.dir.UpdateRun(func(r *results.Run) { r.Warnings = append(r.Warnings, "telemetry off: "+err.Error()) })
	}
	if sampler != nil {
		rec.Sampler = sampler
	}
	return rec
}

// stepper runs user steps s on the setup's engine, recording each step's
// fragments as it ends.
func (ss *session) stepper(s Steps) *stepper {
	return &stepper{s: s, workload: ss.Workload, inst: ss.inst, startBarrier: ss.Barrier,
		afterStep: func(step results.Step) { recordFragmentation(ss.dir, ss.pl, ss.inst, step.Name) },
		rec:       ss.newRecording(ss.pl, ss.inst), progress: ss.env.Progress}
}

// barrier waits at the setup's start barrier, when there is one.
func (ss *session) barrier(ctx context.Context) error {
	if ss.Barrier == nil {
		return nil
	}
	return ss.Barrier(ctx)
}

// stepsDone records user steps that ended: the outcome's steps, and, when
// they all ran, why StopWhen stopped them (empty when it did not) and what
// conclude (when set) draws from them.
func (ss *session) stepsDone(steps []results.Step, stopped string, conclude func([]results.Step, bool) []results.Figure, err error) error {
	ss.env.Progress.Clear()
	ss.out.Steps, ss.out.Stopped = steps, stopped
	if err != nil {
		return err
	}
	if stopped != "" {
		fmt.Fprintf(ss.env.Out, "stopped after step %s: %s\n", steps[len(steps)-1].Name, stopped)
	}
	if conclude != nil {
		ss.out.Figures = conclude(steps, stopped != "")
	}
	if stopped == "" && len(ss.out.Figures) == 0 {
		return nil
	}
	return ss.dir.UpdateRun(func(r *results.Run) {
		if stopped != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("stopped after step %s: %s", steps[len(steps)-1].Name, stopped))
		}
		r.Figures = append(r.Figures, ss.out.Figures...)
	})
}

// liftCaps takes the storage-class caps off the targets' devices once
// the last measured step has ended, so that what follows (the
// consistency checks, the server's shutdown checkpoint) runs at the
// device's own speed, as the server's start and the load did: none of it
// is measured, and under a slow class's caps the checks and the shutdown
// of a 2-warehouse PostgreSQL took 14 s instead of 3. run.json says so.
func (ss *session) liftCaps() error {
	if ss.liftLimits == nil {
		return nil
	}
	if err := ss.liftLimits(); err != nil {
		return fmt.Errorf("lifting the storage caps after the last step: %w", err)
	}
	return ss.dir.UpdateRun(func(r *results.Run) {
		r.Notes = append(r.Notes, "storage caps lifted after the last measured step: the consistency checks and the server's stop ran at the device's own speed")
	})
}

// check checks the consistency of the setup's database after its steps
// (unless the user skipped it) and records the checks.
func (ss *session) check(ctx context.Context) error {
	if ss.SkipChecks {
		ss.out.Checks = []results.Check{{Name: "consistency checks", Skipped: true, Detail: "skipped at the user's request (--skip-checks)"}}
	} else {
		fmt.Fprintf(ss.env.Out, "checking consistency\n")
		began := ss.env.Now()
		checks, err := ss.Workload.Check(ctx, ss.inst)
		ss.phase(results.PhaseChecks, began, "")
		for _, c := range checks {
			ss.out.Checks = append(ss.out.Checks, results.Check{Name: c.Name, Passed: c.Passed, Detail: c.Detail})
		}
		if err != nil {
			return fmt.Errorf("consistency check: %w", err)
		}
	}
	return ss.dir.UpdateRun(func(r *results.Run) { r.Checks = ss.out.Checks })
}

// stepPhases records the time of the steps that began at began and have
// just ended: their ramp-ups and measurements, and the rest (users
// connecting and stopping, each step's files written).
func (ss *session) stepPhases(steps []results.Step, began time.Time) {
	all := results.PhaseSince(results.PhaseStepsOther, began, ss.env.Now(), "")
	ramp := results.Phase{Name: results.PhaseRampUps}
	measured := results.Phase{Name: results.PhaseMeasurements}
	for _, st := range steps {
		ramp.Seconds += st.RampUpS
		measured.Seconds += st.MeasureS
	}
	ramp.Seconds, measured.Seconds = results.PhaseRound(ramp.Seconds), results.PhaseRound(measured.Seconds)
	all.Seconds = results.PhaseRound(max(all.Seconds-ramp.Seconds-measured.Seconds, 0))
	_ = ss.dir.UpdateRun(func(r *results.Run) { r.Phases = append(r.Phases, ramp, measured, all) })
}
