package runner

import (
	"context"
	"fmt"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/execx"
	"dbio/internal/replay"
	"dbio/internal/results"
	"dbio/internal/target"
)

// replaySubdir is dbio's directory on the data target that holds a
// replay's working file, as `dbio replay` names it.
const replaySubdir = "replay"

// Replay is a body that plays a capture's block I/O with fio on a working
// file in dbio's directory on the plan's data target, under the plan's
// storage-class limits when it has them: a suite's replay run. It starts
// no server and writes what `dbio replay` writes (replay.json, the one
// replay step and its seconds), so that the capture, a command's replays
// and a suite's are read and compared alike.
type Replay struct {
	// Fio is fio's path; Exec runs it.
	Fio  string
	Exec execx.Runner
	// Capture is the capture's directory as the suite names it; Trace its
	// requests and Devices the captured devices' names.
	Capture string
	Trace   blocktrace.Trace
	Devices []string
	Pace    replay.Pace
	Speed   float64
}

// needs are one step as long as the source took (at the replay's speed),
// and the working file's directory on the data target.
func (r Replay) needs() needs {
	return needs{steps: 1, stepTime: r.expected(), subdirs: []string{replaySubdir}}
}

// expected is how long the source took for the trace at the replay's speed.
func (r Replay) expected() time.Duration {
	return time.Duration(replay.ExpectedSeconds(r.Trace, r.Speed) * float64(time.Second))
}

func (r Replay) describe(Setup) string {
	pace := fmt.Sprintf("at the recorded pace (speed %g)", r.Speed)
	if r.Pace == replay.Max {
		pace = "as fast as its order and concurrency allow"
	}
	return fmt.Sprintf("replay of capture %s (%d requests) with fio on the data target, %s", r.Capture, len(r.Trace.Requests), pace)
}

// configure records nothing: as for `dbio replay`, the replay's record
// (replay.json) and its step's detail hold its capture, pace and speed.
func (r Replay) configure(*results.RunConfig) {}

// run lays out the working file, replays the trace on it (fio alone in a
// block-I/O cgroup when the plan has limits) and writes the replay's
// record, step and seconds; the working file is removed on every way out.
func (r Replay) run(ctx context.Context, ss *session) (err error) {
	t := ss.pl.Data
	if t == nil {
		return fmt.Errorf("a replay needs a data target")
	}
	work, err := t.Sub(replaySubdir)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := t.RemoveSub(replaySubdir); rerr != nil && err == nil {
			err = rerr
		}
	}()
	var wrap func(execx.Cmd) execx.Cmd
	if !ss.Limits.IsZero() {
		g, note, err := fioLimits(ss.env.SysFS, []string{t.Path}, ss.Limits, ss.dir.Run().ID)
		if err != nil {
			return err
		}
		defer func() {
			if rerr := g.Remove(); rerr != nil && err == nil {
				err = rerr
			}
		}()
		if err := g.Apply(); err != nil {
			return fmt.Errorf("limit %s: %w", ss.Limits, err)
		}
		wrap = g.Wrap
		if err := ss.dir.UpdateRun(func(run *results.Run) { run.Notes = append(run.Notes, note) }); err != nil {
			return err
		}
		if err := recordLimit(ss.dir, storageLimit(g), func(ti results.TargetInfo) bool { return ti.Role == target.RoleData }); err != nil {
			return err
		}
	}
	storage, _ := t.Storage(ss.env.SysFS) // a filesystem we cannot resolve still replays
	fmt.Fprintf(ss.env.Out, "replaying %s (%d requests) on %s at %s pace\n", r.Capture, len(r.Trace.Requests), t.Path, r.Pace)
	rec, err := replay.Run(ctx, r.Exec, replay.Config{
		Fio: r.Fio, Capture: r.Capture, Trace: r.Trace, Target: t.Path, Storage: storage, WorkDir: work,
		ResultsDir: ss.dir.Path, Pace: r.Pace, Speed: r.Speed, Command: ss.Command, Now: ss.env.Now, Wrap: wrap,
	})
	if err != nil {
		return err
	}
	if err := replay.WriteRecord(ss.dir.Path, rec); err != nil {
		return err
	}
	step, rows := replay.Step(rec, r.Devices, ss.env.Now())
	for _, row := range rows {
		if err := ss.dir.AppendSeries(row); err != nil {
			return err
		}
	}
	if err := ss.dir.WriteStep(step, nil); err != nil {
		return err
	}
	ss.out.Steps = []results.Step{step}
	fmt.Fprintf(ss.env.Out, "%s\n", replay.Summary(rec))
	return nil
}
