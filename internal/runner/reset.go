package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"time"

	"dbio/internal/engine"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/units"
	"dbio/internal/workload"
)

// pristineRecordFile, in a pristine copy's directory, says what the copy
// holds; it is written last, so that a copy without it (a keep that was
// interrupted) is never restored.
const pristineRecordFile = "pristine.json"

// pristineCopyDir is the copy itself inside its directory.
const pristineCopyDir = "copy"

// pristineRecord is what a pristine copy holds and how it was made.
type pristineRecord struct {
	Engine   string `json:"engine"`
	Database string `json:"database"`
	// Settings are the engine settings the copy's instance ran with, and
	// Log the log target it kept its log on ("" beside its data): a copy
	// is restored only where both are the same, since files made under
	// other settings (a page size, a redo log's size) or with the log
	// elsewhere are not what a fresh start of this run would make.
	Settings map[string]string    `json:"settings,omitempty"`
	Log      string               `json:"log,omitempty"`
	Dataset  results.Dataset      `json:"dataset"`
	Copy     results.PristineCopy `json:"copy"`
}

// sameInstance says whether the copy rec describes was made by an
// instance like the one ss starts.
func (ss *session) sameInstance(rec pristineRecord) bool {
	return rec.Engine == ss.Engine.Name() && rec.Database == ss.opts.Database && rec.Log == ss.logPlace() &&
		maps.Equal(rec.Settings, ss.opts.Settings)
}

// logPlace is the log target the run's instance keeps its log on, ""
// when it is beside the data.
func (ss *session) logPlace() string {
	if ss.pl.Log == nil || ss.pl.Data == nil || ss.pl.Log.Path == ss.pl.Data.Path {
		return ""
	}
	return ss.pl.Log.Path
}

// dataPolicy is p's --data: its workload's, fresh for a workload that
// loads no data of its own.
func dataPolicy(p Plan) workload.DataPolicy {
	if k, ok := p.Workload.(workload.DataKept); ok {
		return k.LoadingSettings().Policy()
	}
	return workload.DataFresh
}

// pristineName is the directory, in dbio's directory on the data target,
// of the pristine copy of the engine's database: one per engine and
// database, replaced when a load of other data keeps its own.
func pristineName(e engine.Engine, o engine.Options) string {
	db := o.Database
	if db == "" {
		db = "dbio"
	}
	return "pristine-" + e.Name() + "-" + db
}

// resetProblems are what --data reset cannot do for p: a server of the
// user's (--dsn), whose files dbio has not and must not copy, and an
// engine that keeps no copies. f names the setting as the user wrote it.
func resetProblems(p Plan, f problemForm) []error {
	if dataPolicy(p) != workload.DataReset || p.Engine == nil {
		return nil
	}
	if p.EngineOptions.DSN != "" {
		return f.in(fmt.Errorf("%s reset: dbio restores a pristine copy only of a database whose files it keeps itself, and copies nothing on your server (--dsn): use %s fresh to load again before each run, or %s reuse to keep the data as earlier runs left it, or drop --dsn to let dbio run the server",
			f.name("data"), f.name("data"), f.name("data")))
	}
	if p.DataPath == "" {
		return f.in(fmt.Errorf("%s reset keeps its pristine copy on the data target: give one", f.name("data")))
	}
	if p.Body != nil && !p.Body.needs().engine {
		// Noisy neighbours' tenants each start and load their own.
		return f.in(fmt.Errorf("%s reset restores the one database a run starts its steps on, and this run's servers each load their own: use %s fresh", f.name("data"), f.name("data")))
	}
	return nil
}

// pristineNeed is the space --data reset's copy takes on the data
// target: about the data's size, where a copy kept before counts as free
// (it is replaced, or restored from and kept).
func pristineNeed(p Plan) []target.Need {
	if dataPolicy(p) != workload.DataReset || p.DataPath == "" || p.Engine == nil {
		return nil
	}
	return []target.Need{{Path: p.DataPath, Bytes: p.SpaceNeeded, What: "the pristine copy --data reset keeps",
		Reclaim: target.OwnedBytes(p.DataPath, pristineName(p.Engine, p.EngineOptions))}}
}

// pristine is a --data reset run's pristine copy: where it is, and what
// it holds when there is one this run may restore.
type pristine struct {
	dir    string
	record *pristineRecord
	kept   workload.DataKept
}

// findPristine opens the data target's pristine copy of ss's database
// and says whether it holds the data the run would load, which it then
// restores instead of loading. A copy of other data, or of none, is
// replaced after the run's load.
func (ss *session) findPristine(kept workload.DataKept) (*pristine, error) {
	if ss.pl.Data == nil {
		return nil, errors.New("--data reset needs a data target for its pristine copy")
	}
	dir, err := ss.pl.Data.Sub(pristineName(ss.Engine, ss.opts))
	if err != nil {
		return nil, err
	}
	pr := &pristine{dir: dir}
	f, err := target.OpenFile(filepath.Join(dir, pristineRecordFile), os.O_RDONLY, 0)
	if err != nil {
		return pr, nil // none yet, or one a keep left unfinished
	}
	defer f.Close()
	var rec pristineRecord
	if err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&rec); err != nil {
		return pr, nil
	}
	recorded := map[string]string{}
	for _, kv := range workload.DatasetRecord(rec.Dataset) {
		recorded[kv[0]] = kv[1]
	}
	if !ss.sameInstance(rec) || workload.CheckReuse(recorded, kept.Dataset()) != nil {
		return pr, nil
	}
	pr.record = &rec
	return pr, nil
}

// restore puts the pristine copy back in place of the database inst
// started on, and makes the workload keep the data it finds there: the
// copy's, whose identity its own load record gives.
func (pr *pristine) restore(ctx context.Context, inst engine.Instance, kept workload.DataKept, now func() time.Time) (*results.DataOrigin, error) {
	r, ok := inst.(engine.Resetter)
	if !ok {
		return nil, fmt.Errorf("--data reset: %s keeps no pristine copies: use --data fresh", inst.Info().Engine)
	}
	began := now()
	c, err := r.RestorePristine(ctx, filepath.Join(pr.dir, pristineCopyDir))
	if err != nil {
		return nil, fmt.Errorf("--data reset: %w", err)
	}
	kept.LoadingSettings().Reuse = true
	made := pr.record.Copy
	return &results.DataOrigin{Policy: string(workload.DataReset), State: results.DataReset, Copy: &made,
		ResetSeconds: now().Sub(began).Seconds(), ResetBytes: c.Bytes, ResetMethod: c.Method}, nil
}

// keep replaces whatever the pristine copy's directory held with a copy
// of the database inst has just loaded, and records what it holds last.
func (pr *pristine) keep(ctx context.Context, inst engine.Instance, e engine.Engine, o engine.Options, log string, dataset results.Dataset, now func() time.Time) (*results.PristineCopy, error) {
	r, ok := inst.(engine.Resetter)
	if !ok {
		return nil, fmt.Errorf("--data reset: %s keeps no pristine copies: use --data fresh", e.Name())
	}
	for _, name := range []string{pristineRecordFile, pristineCopyDir} {
		if err := os.RemoveAll(filepath.Join(pr.dir, name)); err != nil {
			return nil, fmt.Errorf("--data reset: remove the previous pristine copy: %w", err)
		}
	}
	began := now()
	c, err := r.KeepPristine(ctx, filepath.Join(pr.dir, pristineCopyDir))
	if err != nil {
		return nil, fmt.Errorf("--data reset: %w", err)
	}
	made := results.PristineCopy{Made: began.UTC(), Method: c.Method, Bytes: c.Bytes, Seconds: now().Sub(began).Seconds(), Path: pr.dir}
	rec := pristineRecord{Engine: e.Name(), Database: o.Database, Settings: o.Settings, Log: log, Dataset: dataset, Copy: made}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := target.WriteFile(filepath.Join(pr.dir, pristineRecordFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("--data reset: %w", err)
	}
	return &made, nil
}

// pristineFor is the pristine copy of a --data reset run (nil for other
// policies), found before the engine starts: an instance that a copy will
// replace need not be re-created first.
func (ss *session) pristineFor(w workload.Workload) (*pristine, error) {
	kept, ok := w.(workload.DataKept)
	if !ok || kept.LoadingSettings().Policy() != workload.DataReset {
		return nil, nil
	}
	pr, err := ss.findPristine(kept)
	if err != nil {
		return nil, err
	}
	pr.kept = kept
	if pr.record != nil {
		ss.opts.Fresh = false
	}
	return pr, nil
}

// restoreBefore restores the pristine copy, when there is one of the
// run's data, before the workload prepares; nil when it does not.
func (pr *pristine) restoreBefore(ctx context.Context, ss *session, inst engine.Instance) (*results.DataOrigin, error) {
	if pr == nil || pr.record == nil {
		return nil, nil
	}
	fmt.Fprintf(ss.env.Out, "resetting the database to its pristine copy of %s (%s)\n", pr.record.Copy.Made.Format(time.RFC3339), pr.dir)
	origin, err := pr.restore(ctx, inst, pr.kept, ss.env.Now)
	if errors.Is(err, engine.ErrPristineGone) {
		// Nothing was replaced: the run loads, and keeps a new copy.
		fmt.Fprintf(ss.env.Out, "the pristine copy cannot be restored (%v): loading again and keeping a new copy\n", err)
		pr.record = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(ss.env.Out, "reset: %s of %s in %.1f s\n", origin.ResetMethod, units.FormatBytes(uint64(max(origin.ResetBytes, 0))), origin.ResetSeconds)
	return origin, nil
}

// keepAfter keeps a pristine copy of the data a --data reset run has
// just loaded, and says what the run's data was (origin, when the data
// was reset): loaded, reset or reused.
func (pr *pristine) keepAfter(ctx context.Context, ss *session, inst engine.Instance, ls workload.LoadStats, origin *results.DataOrigin) (*results.DataOrigin, error) {
	policy := workload.DataFresh
	if k, ok := ss.Workload.(workload.DataKept); ok {
		policy = k.LoadingSettings().Policy()
	}
	if ls.Reused && origin != nil {
		return origin, nil
	}
	if !ls.Reused && pr != nil {
		made, err := pr.keep(ctx, inst, ss.Engine, ss.opts, ss.logPlace(), ls.Dataset, ss.env.Now)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(ss.env.Out, "kept a pristine copy of the loaded database for --data reset: %s of %s in %.1f s (%s)\n", made.Method, units.FormatBytes(uint64(max(made.Bytes, 0))), made.Seconds, pr.dir)
		return &results.DataOrigin{Policy: string(workload.DataReset), State: results.DataLoaded, Copy: made}, nil
	}
	state := results.DataLoaded
	if ls.Reused {
		state = results.DataReused
	}
	return &results.DataOrigin{Policy: string(policy), State: state}, nil
}

// coldCacheNote says, for a run restored from a pristine copy, that its
// engine began the steps without the database in its own cache: restored
// files are new to it (a server restarted on them, PostgreSQL's database
// created again, SQLite's connections opened again), where a fresh load
// leaves what it wrote there. On a capped disk that difference is the
// measurement: MariaDB's 1 GB pool, empty after a restart, read 4
// warehouses back at 300 read IOPS and did 3 TPM at 2 users. Empty for
// other runs.
func coldCacheNote(origin *results.DataOrigin) string {
	if origin == nil || origin.State != results.DataReset {
		return ""
	}
	return "data reset: the engine began its steps without the database in its own cache (its buffer pool), where a fresh load leaves what it wrote there; " +
		"its first seconds read the data back, at the disk's speed where the page cache does not hold it: " +
		"a ramp-up long enough to fill the cache, or --data fresh, measures a warm engine"
}
