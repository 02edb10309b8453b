// Package as3ap is the AS3AP-style stress load of the I/O-optimizer study: the
// four AS3AP relations (uniques, hundred, tenpct, updates) with their column
// distributions at a chosen row count, a fixed background of batch jobs that
// each read and update a range of rows per transaction continuously, and
// interactive users running single-row transactions with no think time.
//
// The batch jobs run as background sessions through every step (the
// runner's Background interface); the interactive users are the step's
// virtual users, so a stepping run adds interactive load on top of a
// constant batch load until the interactive response time passes a ceiling.
package as3ap

import (
	"sync"
	"sync/atomic"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/workload"
)

// Config is what a user chooses for an AS3AP run.
type Config struct {
	// Rows is the row count of each of the four relations.
	Rows int `json:"rows" toml:"rows"`
	// BatchJobs is the number of background batch jobs, constant over the run.
	BatchJobs int `json:"batch_jobs" toml:"batch_jobs"`
	// BatchRows is how many rows each batch transaction reads and then updates.
	BatchRows int `json:"batch_rows" toml:"batch_rows"`
	// Loading is the relations' seed, how many load at once, and whether
	// relations dbio loaded before at the same row count are kept.
	workload.Loading
}

// DefaultConfig is 100,000 rows per relation and three batch jobs of 100 rows.
func DefaultConfig() Config {
	return Config{Rows: 100000, BatchJobs: 3, BatchRows: 100, Loading: workload.Loading{Seed: 42}}
}

// MinBatchRows is the least a batch transaction reads and updates: the
// methodology's batch jobs touch at least 100 rows per transaction.
const MinBatchRows = 100

// maxRows keeps the sparse keys (spread over 0..10⁹) within a 32-bit integer.
const maxRows = 100_000_000

// Validate reports every problem with c at once, naming the flag to fix.
func (c Config) Validate() []error {
	var errs []error
	if c.Rows < 1000 || c.Rows > maxRows {
		errs = append(errs, workload.Invalid("rows", c.Rows, "use a row count per relation from 1000 to %d", maxRows))
	}
	if c.BatchJobs < 0 || c.BatchJobs > 1000 {
		errs = append(errs, workload.Invalid("batch-jobs", c.BatchJobs, "use 0 to 1000 background batch jobs"))
	}
	if c.BatchRows < MinBatchRows {
		errs = append(errs, workload.Invalid("batch-rows", c.BatchRows, "a batch job reads and updates at least %d rows per transaction", MinBatchRows))
	} else if c.Rows >= 1000 && c.BatchRows > c.Rows {
		errs = append(errs, workload.Invalid("batch-rows", c.BatchRows, "more than the %d rows of a relation; lower it or raise --rows", c.Rows))
	}
	return append(errs, c.Loading.Validate()...)
}

// EstimatedBytes is the space the four relations need with their indexes:
// about 160 bytes a row in each relation, plus 30 % headroom.
func EstimatedBytes(c Config) uint64 {
	const perRow = 4 * 210
	return uint64(c.Rows)*perRow + 20<<20
}

// Transaction types, as the sessions record them.
const (
	txRead   = iota // interactive: one row of uniques by key
	txUpdate        // interactive: one row of updates by key
	txBatch         // background: read and update BatchRows rows of updates
)

var txNames = []string{"interactive_read", "interactive_update", "batch"}

// Stats are the interactive response-time statistics a ceiling can apply to.
var Stats = []string{"mean", "p95", "p99"}

// InteractiveFigure is the name of the step figure holding the interactive
// response time's stat (mean, p95 or p99), in milliseconds.
func InteractiveFigure(stat string) (results.FigureName, error) {
	switch stat {
	case "mean":
		return results.FigureInteractiveLatencyMean, nil
	case "p95":
		return results.FigureInteractiveLatencyP95, nil
	case "p99":
		return results.FigureInteractiveLatencyP99, nil
	}
	return "", workload.Invalid("ceiling-stat", stat, "use mean, p95 or p99")
}

// Workload is the AS3AP-style load bound to a configuration.
type Workload struct {
	cfg Config

	mu sync.Mutex
	// baseline is SUM(col_signed) of updates when the run began; every
	// committed update adds one per row to it.
	baseline int64
	prepared bool
	// increments counts the rows committed updates added one to.
	increments atomic.Int64
	sqlDialects
}

var _ workload.Workload = (*Workload)(nil)

// New returns the workload for cfg, which must have passed Validate.
func New(cfg Config) *Workload { return &Workload{cfg: cfg} }

// Config returns the configuration.
func (w *Workload) Config() Config { return w.cfg }

// Name implements workload.Workload.
func (w *Workload) Name() string { return "as3ap" }

// TxTypes implements workload.Workload.
func (w *Workload) TxTypes() []string { return txNames }

// Reusing reports whether the run keeps existing relations (no new space needed).
func (w *Workload) Reusing() bool { return w.cfg.Reuse }

// BackgroundSessions is the number of batch jobs (the runner's Background interface).
func (w *Workload) BackgroundSessions() int { return w.cfg.BatchJobs }

// Figures implements workload.Workload: interactive and batch work apart,
// each with its throughput and response time; the runner's tps and
// latency_p99 merge both.
func (w *Workload) Figures(counts []metrics.TxCounts, d time.Duration) []results.Figure {
	if len(counts) != len(txNames) || d <= 0 {
		return nil
	}
	secs := d.Seconds()
	in := metrics.Merge(counts[txRead], counts[txUpdate])
	figs := []results.Figure{results.FigureInteractiveTPS.With(float64(in.Committed) / secs)}
	if in.Latency.TotalCount() > 0 {
		figs = append(figs,
			results.FigureInteractiveLatencyMean.With(in.Latency.Mean()/1000),
			results.FigureInteractiveLatencyP95.With(float64(in.Latency.ValueAtQuantile(95))/1000),
			results.FigureInteractiveLatencyP99.With(float64(in.Latency.ValueAtQuantile(99))/1000),
		)
	}
	b := counts[txBatch]
	figs = append(figs,
		results.FigureBatchTPS.With(float64(b.Committed)/secs),
		results.FigureBatchRowsPerSec.With(float64(b.Committed)*float64(w.cfg.BatchRows)/secs),
	)
	if b.Latency.TotalCount() > 0 {
		figs = append(figs, results.FigureBatchLatencyMean.With(b.Latency.Mean()/1000))
	}
	return figs
}

// FigureNames implements workload.Workload.
func (w *Workload) FigureNames() []results.FigureName {
	return []results.FigureName{results.FigureInteractiveTPS, results.FigureInteractiveLatencyMean, results.FigureInteractiveLatencyP95,
		results.FigureInteractiveLatencyP99, results.FigureBatchTPS, results.FigureBatchRowsPerSec, results.FigureBatchLatencyMean}
}
