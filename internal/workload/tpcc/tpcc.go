// Package tpcc implements the TPC-C benchmark (TPC-C specification revision
// 5.11): the nine tables and their population rules, the five transactions
// with the standard mix, virtual users (terminals) with optional keying and
// think times, and the consistency conditions checked after a run.
//
// Transaction inputs are generated here, the same way for every engine; an
// engine-specific backend only decides how a transaction's SQL reaches the
// database (client-side statements, or server-side procedures).
package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/workload"
	"dbio/internal/workload/txerr"
)

// Config is what a user chooses for a TPC-C run.
type Config struct {
	Warehouses int `json:"warehouses" toml:"warehouses"`
	// KeyingThinking adds the specification's keying and think times (5.2.5.7);
	// without them each user runs transactions back to back.
	KeyingThinking bool `json:"keying_thinking" toml:"keying_thinking"`
	// Seed makes data generation and transaction inputs reproducible.
	Seed uint64 `json:"seed" toml:"seed"`
	// LoadWorkers is the number of warehouses loaded in parallel; 0 lets the backend choose.
	LoadWorkers int `json:"load_workers" toml:"load_workers"`
	// Reuse keeps a dataset already loaded at the same scale instead of rebuilding it.
	Reuse bool `json:"reuse" toml:"-"`
	// SkipChecks turns off the consistency checks after the run (recorded in the results).
	SkipChecks bool `json:"skip_checks" toml:"-"`
}

// Validate reports every problem with c at once.
func (c Config) Validate() []error {
	var errs []error
	if c.Warehouses < 1 {
		errs = append(errs, workload.Invalid("warehouses", c.Warehouses, "must be a whole number of at least 1"))
	}
	if c.Warehouses > 100000 {
		errs = append(errs, workload.Invalid("warehouses", c.Warehouses, "at most 100000"))
	}
	if c.LoadWorkers < 0 {
		errs = append(errs, workload.Invalid("load-workers", c.LoadWorkers, "must be 0 (automatic) or more"))
	}
	return errs
}

// EstimatedBytes is the space a database of w warehouses needs on disk,
// including indexes and headroom for the rows a run adds: SQLite keeps about
// 170 MB per warehouse after the load and PostgreSQL about 100 MB, so the
// larger figure plus 20 % is asked for.
func EstimatedBytes(w int) uint64 {
	const perWarehouse = 205 << 20
	return uint64(w)*perWarehouse + 20<<20
}

// Workload is TPC-C bound to a configuration.
type Workload struct {
	cfg Config

	mu        sync.Mutex
	load      Constants // as stored with the data
	run       Constants
	haveConst bool
	sqliteQueues
}

var _ workload.Workload = (*Workload)(nil)

// New returns TPC-C with cfg.
func New(cfg Config) *Workload { return &Workload{cfg: cfg} }

// Name implements workload.Workload.
func (w *Workload) Name() string { return "tpcc" }

// TxTypes implements workload.Workload.
func (w *Workload) TxTypes() []string { return txNames[:] }

// Config returns the configuration.
func (w *Workload) Config() Config { return w.cfg }

// Figures implements workload.Workload: TPM counts committed transactions of
// every type per minute, NOPM committed New-Orders per minute.
func (w *Workload) Figures(counts []metrics.TxCounts, d time.Duration) []workload.Figure {
	var all int64
	for _, c := range counts {
		all += c.Committed
	}
	var nopm float64
	if len(counts) > TxNewOrder {
		nopm = metrics.PerMinute(counts[TxNewOrder].Committed, d)
	}
	return []workload.Figure{
		{Name: results.FigureTPM, Value: metrics.PerMinute(all, d), Unit: "tx/min"},
		{Name: results.FigureNOPM, Value: nopm, Unit: "new-orders/min"},
	}
}

// PerUserFigure implements workload.PerUser: TPM per user says what each
// added user gets.
func (w *Workload) PerUserFigure() results.FigureName { return results.FigureTPM }

// backend adapts TPC-C to one engine family.
type backend interface {
	// createSchema drops dbio's TPC-C tables where present and creates them empty.
	createSchema(ctx context.Context, inst engine.Instance) error
	// newSink opens a bulk writer for one loader worker.
	newSink(ctx context.Context, inst engine.Instance) (rowSink, error)
	// finishLoad adds what is faster to build after the data (indexes, statistics).
	finishLoad(ctx context.Context, inst engine.Instance) error
	// loadWorkers is the default parallelism of the loader.
	loadWorkers() int
	newExecutor(ctx context.Context, inst engine.Instance) (executor, error)
	// notes explain engine-specific choices for the results.
	notes() []string
}

// backend returns the backend of inst's engine; w's writers queue the
// writers of a SQLite database.
func (w *Workload) backend(inst engine.Instance) (backend, error) {
	backends := workload.NewPerEngine[backend]("tpcc")
	backends.Register("sqlite", sqliteBackend{writers: &w.writers})
	backends.Register("postgres", pgBackend{})
	backends.Register("mariadb", myBackend{})
	backends.Register("mysql", myBackend{})
	return backends.For(inst)
}

// Reusing reports whether the run keeps an existing dataset (no new space needed).
func (w *Workload) Reusing() bool { return w.cfg.Reuse }

// EngineNotes describe how the backend for inst runs TPC-C, for the results.
func (w *Workload) EngineNotes(inst engine.Instance) []string {
	b, err := w.backend(inst)
	if err != nil {
		return nil
	}
	return b.notes()
}

// NewSession implements workload.Workload. User u is terminal u: its home
// warehouse is u mod W + 1, spreading terminals evenly over the warehouses,
// and its Stock-Level district is constant (2.8.1.1).
func (w *Workload) NewSession(ctx context.Context, inst engine.Instance, user int, rec *metrics.Recorder) (workload.Session, error) {
	b, err := w.backend(inst)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	have, run := w.haveConst, w.run
	w.mu.Unlock()
	if !have {
		return nil, errors.New("tpcc: Prepare must run before sessions start")
	}
	exec, err := b.newExecutor(ctx, inst)
	if err != nil {
		return nil, fmt.Errorf("user %d: connect: %w", user+1, err)
	}
	s := &session{
		w:        w,
		b:        b,
		classify: txerr.For(inst),
		exec:     exec,
		rec:      rec,
		r:        newRnd(w.cfg.Seed+uint64(user)*7919+1, uint64(user)+0x9e3779b9, run),
		wID:      user%w.cfg.Warehouses + 1,
		slDID:    (user/w.cfg.Warehouses)%DistrictsPerWarehouse + 1,
		pacing:   w.cfg.KeyingThinking,
		nowFunc:  time.Now,
	}
	return s, nil
}

// runConstants derives and remembers the run-time constants from the load-time ones.
func (w *Workload) setConstants(load Constants) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.load = load
	w.run = RunConstants(load, rand.New(rand.NewPCG(w.cfg.Seed, 0xC0FFEE)))
	w.haveConst = true
}
