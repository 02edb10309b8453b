package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"dbio/internal/engine"
	"dbio/internal/results"
	"dbio/internal/target"
)

// Backups is a run's body of backup and restore cycles of the database the
// setup prepared, with the workload running meanwhile when Users > 0.
type Backups struct {
	Cycles   int
	Restore  bool
	Interval time.Duration
	// Users keep the workload running during each backup; 0 backs up an idle database.
	Users int
}

func (b Backups) needs() needs {
	return needs{engine: true, servers: 1, users: []int{b.Users}, steps: b.Cycles, stepTime: b.Interval}
}

func (b Backups) describe(p Setup) string {
	return fmt.Sprintf("%s on %s: %s", p.Workload.Name(), p.Engine.Name(), describeBackups(b))
}

func (b Backups) configure(c *results.RunConfig) {
	c.Backups = &results.BackupsConfig{Cycles: b.Cycles, Restore: b.Restore, Interval: b.Interval, Users: b.Users}
}

// run runs the cycles and records the checks of each restore.
func (b Backups) run(ctx context.Context, ss *session) error {
	steps, err := runBackups(ctx, ss, b)
	ss.out.Steps = steps
	if err != nil {
		return err
	}
	return ss.dir.UpdateRun(func(r *results.Run) {
		for _, s := range steps {
			if s.Backup == nil {
				continue
			}
			for _, c := range s.Backup.Checks {
				c.Name = s.Name + ": " + c.Name
				r.Checks = append(r.Checks, c)
				ss.out.Checks = append(ss.out.Checks, c)
			}
		}
	})
}

// describeBackups says what a backup run does, for the plan line.
func describeBackups(b Backups) string {
	what := "backup"
	if b.Restore {
		what = "backup and restore"
	}
	load := "an idle database"
	if b.Users > 0 {
		load = fmt.Sprintf("the workload running at %s", count(b.Users, "user"))
	}
	s := fmt.Sprintf("%s of %s after the load", count(b.Cycles, what+" cycle"), load)
	if b.Cycles > 1 {
		s += fmt.Sprintf(", %s apart", b.Interval)
	}
	return s
}

// count is n and the noun, plural but for one.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// runBackups runs the backup scenario on the setup's prepared instance.
func runBackups(ctx context.Context, ss *session, bp Backups) ([]results.Step, error) {
	dest := ss.pl.Backup
	if dest == nil {
		dest = ss.pl.Data
	}
	if dest == nil {
		return nil, fmt.Errorf("backups need a backup target (or a data target)")
	}
	d, err := dest.Sub("backups-" + ss.inst.Info().Engine)
	if err != nil {
		return nil, err
	}
	b := &backupCycles{
		Backups:   bp,
		Tenant:    tenant{Name: "db", Instance: ss.inst, Workload: ss.Workload, Users: bp.Users},
		Dest:      d,
		recording: ss.newRecording(placementWith(ss.pl, dest), ss.inst),
	}
	return b.Run(ctx)
}

func placementWith(pl engine.Placement, backup *target.Target) engine.Placement {
	pl.Backup = backup
	return pl
}

// TableLister is implemented by workloads that can name their tables, so a
// restore can be verified by row counts.
type TableLister interface {
	Tables() []string
}

// Backups runs backup and restore cycles on one database, with its workload
// running meanwhile when Tenant.Users > 0.
type backupCycles struct {
	Backups
	Tenant tenant
	// Dest is a directory dbio owns on the backup target; cycle N writes Dest/cycle-N.
	Dest string
	recording
}

// Run executes the cycles and returns the steps it wrote.
func (b *backupCycles) Run(ctx context.Context) ([]results.Step, error) {
	b.recording.defaults()
	bk, ok := b.Tenant.Instance.(engine.Backuper)
	if !ok {
		return nil, fmt.Errorf("%s has no backup support", b.Tenant.Instance.Info().Engine)
	}
	if b.Cycles < 1 {
		return nil, errors.New("backup scenario needs at least one cycle")
	}
	var steps []results.Step
	index := b.FirstIndex
	for cycle := 1; cycle <= b.Cycles; cycle++ {
		dest := filepath.Join(b.Dest, fmt.Sprintf("cycle-%d", cycle))
		// The destination is dbio's own (under its marked directory); a
		// previous run's copy of this cycle is replaced.
		if err := os.RemoveAll(dest); err != nil {
			return steps, fmt.Errorf("clear %s: %w", dest, err)
		}
		var counts map[string]int64
		if b.Tenant.Users == 0 {
			counts, _ = rowCounts(ctx, b.Tenant)
		}
		fmt.Fprintf(b.Log, "backup cycle %d of %d\n", cycle, b.Cycles)
		step, res, err := b.timed(ctx, index, fmt.Sprintf("backup-%d", cycle), results.KindBackup, cycle, dest, func(ctx context.Context) (engine.BackupResult, error) {
			return bk.Backup(ctx, dest)
		})
		steps = append(steps, step)
		index++
		if err != nil {
			return steps, err
		}
		if b.Restore {
			fmt.Fprintf(b.Log, "restore cycle %d of %d\n", cycle, b.Cycles)
			rstep, _, err := b.timed(ctx, index, fmt.Sprintf("restore-%d", cycle), results.KindRestore, cycle, dest, func(ctx context.Context) (engine.BackupResult, error) {
				return res, bk.Restore(ctx, res.Path)
			})
			if err == nil {
				err = b.verify(ctx, &rstep, counts)
			}
			steps = append(steps, rstep)
			index++
			if err != nil {
				return steps, err
			}
		}
		if cycle < b.Cycles && b.Interval > 0 {
			if err := b.idle(ctx, fmt.Sprintf("interval-%d", cycle)); err != nil {
				return steps, err
			}
		}
	}
	return steps, nil
}

// timed runs one backup or restore while sampling every tick: the growth of
// the destination (backup MB/s), telemetry and, for a backup with users, the
// workload. A restore runs with the users stopped: it replaces the database.
func (b *backupCycles) timed(ctx context.Context, index int, name, op string, cycle int, dest string,
	do func(context.Context) (engine.BackupResult, error)) (results.Step, engine.BackupResult, error) {
	var l *load
	if op == "backup" && b.Tenant.Users > 0 {
		var err error
		if l, err = startLoad(ctx, []tenant{b.Tenant}, b.Now()); err != nil {
			return results.Step{Index: index, Name: name, Kind: op, Status: results.StatusFailed, Error: err.Error()}, engine.BackupResult{}, err
		}
		defer l.finish()
	}
	b.StartStep()
	start := b.Now()
	done := make(chan struct{})
	var res engine.BackupResult
	var opErr error
	go func() {
		defer close(done)
		res, opErr = do(ctx)
	}()
	ticker := time.NewTicker(b.Tick)
	defer ticker.Stop()
	var perSec []float64
	prev, prevAt := dirBytes(dest), start
	exits := watchExits([]tenant{b.Tenant})
loop:
	for {
		select {
		case <-done:
			break loop
		case err := <-exits:
			if op == "backup" {
				// A restore stops and starts the server on purpose.
				opErr = err
				<-done
				break loop
			}
		case <-ticker.C:
		}
		now := b.Now()
		size := dirBytes(dest)
		mb := 0.0
		if secs := now.Sub(prevAt).Seconds(); secs > 0 {
			mb = float64(size-prev) / 1e6 / secs
		}
		prevAt = now
		if op == "restore" {
			mb = 0 // the destination is read, not written; the device figures tell the story
		}
		prev = size
		perSec = append(perSec, mb)
		row := results.SeriesRow{Time: now, Step: name, Phase: op, Values: []results.Sample{{Name: op + "_mb_per_s", Value: mb}, {Name: string(results.FigureBackupActive), Value: 1}}}
		if l != nil {
			row.Values = append(row.Values, l.samples(now)...)
		}
		b.AppendRow(row)
	}
	end := b.Now()
	secs := end.Sub(start).Seconds()
	if op == "backup" && res.Bytes == 0 {
		res.Bytes = dirBytes(dest)
	}
	d := results.BackupDetail{Op: op, Cycle: cycle, Tool: res.Tool, Path: res.Path, Bytes: res.Bytes, Seconds: secs, PerSec: perSec}
	if secs > 0 {
		d.MBPerSec = float64(res.Bytes) / 1e6 / secs
	}
	step := results.Step{Index: index, Name: name, Kind: op, Started: start, Ended: end, MeasureS: secs, Status: results.StatusCompleted,
		Figures: []results.Figure{results.FigureCopySeconds.With(secs), results.FigureCopyMB.With(float64(res.Bytes) / 1e6),
			results.FigureCopyMBPerSec.With(d.MBPerSec)}}
	d.Latency = b.concludeTelemetry(&step, "p99", func(s results.LatencySpread) float64 { return s.P99 })
	if l != nil {
		l.tick(b.Now())
		ws := workloadStep(b.Tenant, l.totals()[0], end.Sub(start))
		step.Users = b.Tenant.Users
		step.Figures = append(step.Figures, ws.Figures...)
	}
	if opErr != nil {
		step.Status, step.Error = results.StatusFailed, opErr.Error()
		if ctx.Err() != nil {
			step.Status = results.StatusInterrupted
		}
	}
	step.Backup = &d
	if err := b.Dir.WriteStep(step, nil); err != nil && opErr == nil {
		opErr = err
	}
	if opErr != nil {
		opErr = fmt.Errorf("%s cycle %d: %w", op, cycle, opErr)
	}
	return step, res, opErr
}

// verify checks a restored database: the workload's consistency conditions
// and, when it was backed up idle, the same row count in every table.
func (b *backupCycles) verify(ctx context.Context, step *results.Step, before map[string]int64) error {
	var d results.BackupDetail
	if step.Backup != nil {
		d = *step.Backup
	}
	checks, err := b.Tenant.Workload.Check(ctx, b.Tenant.Instance)
	if err != nil {
		return fmt.Errorf("verify restore: %w", err)
	}
	ok := true
	for _, c := range checks {
		d.Checks = append(d.Checks, results.Check{Name: c.Name, Passed: c.Passed, Detail: c.Detail})
		ok = ok && c.Passed
	}
	after, err := rowCounts(ctx, b.Tenant)
	if err == nil {
		d.Rows = after
	}
	if before != nil {
		for _, t := range slices.Sorted(maps.Keys(before)) {
			n := before[t]
			match := after[t] == n
			d.Checks = append(d.Checks, results.Check{Name: "rows in " + t, Passed: match, Detail: fmt.Sprintf("%d backed up, %d restored", n, after[t])})
			ok = ok && match
		}
	}
	d.Verified = &ok
	step.Backup = &d
	if !ok {
		step.Status = results.StatusFailed
		step.Error = "restored database failed verification"
	}
	if err := b.Dir.WriteStep(*step, nil); err != nil {
		return err
	}
	if !ok {
		return errors.New("restored database failed verification: see the restore step's checks")
	}
	return nil
}

// idle keeps the workload (if any) running between cycles and samples it.
func (b *backupCycles) idle(ctx context.Context, name string) error {
	var l *load
	if b.Tenant.Users > 0 {
		var err error
		if l, err = startLoad(ctx, []tenant{b.Tenant}, b.Now()); err != nil {
			return err
		}
		defer l.finish()
	}
	end := b.Now().Add(b.Interval)
	ticker := time.NewTicker(b.Tick)
	defer ticker.Stop()
	for b.Now().Before(end) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
		now := b.Now()
		row := results.SeriesRow{Time: now, Step: name, Phase: "interval", Values: []results.Sample{{Name: "backup_active", Value: 0}}}
		if l != nil {
			row.Values = append(row.Values, l.samples(now)...)
		}
		b.AppendRow(row)
	}
	return nil
}

func rowCounts(ctx context.Context, t tenant) (map[string]int64, error) {
	tl, ok := t.Workload.(TableLister)
	if !ok {
		return nil, errors.New("workload cannot list its tables")
	}
	out := map[string]int64{}
	for _, table := range tl.Tables() {
		var n int64
		if err := t.Instance.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			return out, err
		}
		out[table] = n
	}
	return out, nil
}

// diskLatency picks each device's read and write await from a telemetry summary.
func diskLatency(s results.TelemetrySummary) map[string]results.LatencySpread {
	out := map[string]results.LatencySpread{}
	for _, n := range slices.Sorted(maps.Keys(s.Metrics)) {
		if !strings.HasPrefix(n, "disk_") || !strings.HasSuffix(n, "_await_ms") {
			continue
		}
		st := s.Metrics[n]
		key := strings.TrimSuffix(strings.TrimPrefix(n, "disk_"), "_ms")
		out[key] = results.LatencySpread{Mean: st.Mean, P99: st.P99, Max: st.Max}
	}
	return out
}

// dirBytes is the size of the files under dir (0 when it does not exist yet).
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
