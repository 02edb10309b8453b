// Package sysbench runs the OLTP workloads of sysbench 1.0 inside dbio:
// the same sbtest tables and data, the same transaction shapes
// (oltp_read_write, oltp_read_only, oltp_write_only, oltp_point_select,
// oltp_update_index) with the same query counts, and the same random
// distributions, so that TPS, QPS and latency mean what they mean in a
// sysbench report, on SQLite, PostgreSQL and MariaDB alike.
//
// It is written from sysbench's documented behaviour (its --help output and
// the statements it sends), not from its Lua scripts.
package sysbench

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/workload"
)

// The transaction shapes, named as sysbench's tests.
const (
	ReadWrite   = "oltp_read_write"
	ReadOnly    = "oltp_read_only"
	WriteOnly   = "oltp_write_only"
	PointSelect = "oltp_point_select"
	UpdateIndex = "oltp_update_index"
)

// Workloads lists the transaction shapes dbio runs.
var Workloads = []string{ReadWrite, ReadOnly, WriteOnly, PointSelect, UpdateIndex}

// Config is a sysbench run's options. Field names follow sysbench's; the
// defaults (DefaultConfig) are sysbench 1.0's, except RandType (see there).
type Config struct {
	Tables    int    `json:"tables" toml:"tables"`
	TableSize int    `json:"table_size" toml:"table_size"`
	Workload  string `json:"workload" toml:"workload"`

	// Queries per transaction, as sysbench's options of the same names.
	PointSelects    int  `json:"point_selects" toml:"-"`
	SimpleRanges    int  `json:"simple_ranges" toml:"-"`
	SumRanges       int  `json:"sum_ranges" toml:"-"`
	OrderRanges     int  `json:"order_ranges" toml:"-"`
	DistinctRanges  int  `json:"distinct_ranges" toml:"-"`
	RangeSize       int  `json:"range_size" toml:"range_size"`
	IndexUpdates    int  `json:"index_updates" toml:"-"`
	NonIndexUpdates int  `json:"non_index_updates" toml:"-"`
	DeleteInserts   int  `json:"delete_inserts" toml:"-"`
	RangeSelects    bool `json:"range_selects" toml:"-"`
	// SkipTrx runs every query in autocommit mode, without BEGIN and COMMIT.
	SkipTrx bool `json:"skip_trx" toml:"skip_trx"`

	// RandType is the distribution of row ids (and of k when loading):
	// uniform, gaussian, special or pareto. dbio defaults to uniform, the
	// default of sysbench after 1.0 and what vendors recommend; sysbench
	// 1.0.20 itself defaults to special, which crowds 75 % of accesses onto
	// 1 % of the rows: pass special to reproduce a 1.0 run with default options.
	RandType string `json:"rand_type" toml:"rand_type"`
	// SpecIter, SpecPct and SpecRes shape the gaussian and special
	// distributions, ParetoH the pareto one (sysbench's --rand-spec-* and --rand-pareto-h).
	SpecIter int     `json:"rand_spec_iter" toml:"-"`
	SpecPct  float64 `json:"rand_spec_pct" toml:"-"`
	SpecRes  float64 `json:"rand_spec_res" toml:"-"`
	ParetoH  float64 `json:"rand_pareto_h" toml:"-"`

	// Loading is the tables' seed, how many load at once, and whether
	// tables dbio loaded before at this size are kept.
	workload.Loading
}

// DefaultConfig is sysbench 1.0's defaults, with uniform ids (see RandType).
func DefaultConfig() Config {
	return Config{
		Tables: 1, TableSize: 10000, Workload: ReadWrite,
		PointSelects: 10, SimpleRanges: 1, SumRanges: 1, OrderRanges: 1, DistinctRanges: 1, RangeSize: 100,
		IndexUpdates: 1, NonIndexUpdates: 1, DeleteInserts: 1, RangeSelects: true,
		RandType: "uniform", SpecIter: 12, SpecPct: 1, SpecRes: 75, ParetoH: 0.2,
		Loading: workload.Loading{Seed: 42},
	}
}

// Validate reports every problem with c at once, naming the flag to fix.
func (c Config) Validate() []error {
	var errs []error
	if c.Tables < 1 || c.Tables > 10000 {
		errs = append(errs, workload.Invalid("tables", c.Tables, "use a whole number from 1 to 10000"))
	}
	if c.TableSize < 1 || c.TableSize > 2_000_000_000 {
		errs = append(errs, workload.Invalid("table-size", c.TableSize, "use a whole number of rows from 1 to 2000000000"))
	}
	if !slices.Contains(Workloads, c.Workload) {
		errs = append(errs, workload.Invalid("workload", c.Workload, "use one of %s", strings.Join(Workloads, ", ")))
	}
	if _, ok := distributions[c.RandType]; !ok {
		errs = append(errs, workload.Invalid("rand-type", c.RandType, "use one of %s", strings.Join(distributionNames(), ", ")))
	}
	for _, q := range []struct {
		name string
		n    int
	}{
		{"point_selects", c.PointSelects}, {"simple_ranges", c.SimpleRanges}, {"sum_ranges", c.SumRanges},
		{"order_ranges", c.OrderRanges}, {"distinct_ranges", c.DistinctRanges}, {"index_updates", c.IndexUpdates},
		{"non_index_updates", c.NonIndexUpdates}, {"delete_inserts", c.DeleteInserts},
	} {
		if q.n < 0 {
			errs = append(errs, fmt.Errorf("%s %d: must be 0 or more", q.name, q.n))
		}
	}
	if c.RangeSize < 1 {
		errs = append(errs, fmt.Errorf("range_size %d: must be at least 1", c.RangeSize))
	}
	if c.SpecIter < 1 || c.SpecPct <= 0 || c.SpecPct > 100 || c.SpecRes < 0 || c.SpecRes > 100 {
		errs = append(errs, fmt.Errorf("rand_spec_iter %d, rand_spec_pct %g, rand_spec_res %g: need at least 1 iteration and percentages in (0, 100]", c.SpecIter, c.SpecPct, c.SpecRes))
	}
	if c.ParetoH <= 0 || c.ParetoH >= 1 {
		errs = append(errs, fmt.Errorf("rand_pareto_h %g: must lie strictly between 0 and 1", c.ParetoH))
	}
	errs = append(errs, c.Loading.Validate()...)
	if len(errs) == 0 && c.shape().queries() == 0 {
		errs = append(errs, fmt.Errorf("%s with these query counts sends no query: raise at least one count", c.Workload))
	}
	return errs
}

// EstimatedBytes is the space the tables need: about 250 bytes a row in
// InnoDB and PostgreSQL with the k index (measured), plus 30 % headroom.
func EstimatedBytes(c Config) uint64 {
	const perRow = 330
	return uint64(c.Tables)*uint64(c.TableSize)*perRow + 20<<20
}

// Workload is a sysbench OLTP workload bound to a configuration.
type Workload struct {
	cfg   Config
	shape shape
	// stmts are each table's statements, by table number - 1.
	stmts []tableStatements
	sqlDialects
}

var _ workload.Workload = (*Workload)(nil)

// New returns the workload for cfg, which must have passed Validate.
func New(cfg Config) *Workload {
	return &Workload{cfg: cfg, shape: cfg.shape(), stmts: statementsFor(cfg.Tables)}
}

// Config returns the configuration.
func (w *Workload) Config() Config { return w.cfg }

// Name implements workload.Workload.
func (w *Workload) Name() string { return "sysbench" }

// TxTypes implements workload.Workload: one type, the shape's name, as
// sysbench counts each event of its test as one transaction.
func (w *Workload) TxTypes() []string { return []string{w.cfg.Workload} }

// Reusing reports whether the run keeps existing tables (no new space needed).
func (w *Workload) Reusing() bool { return w.cfg.Reuse }

// QueriesPerTransaction is what one transaction sends, split as sysbench's
// report splits it: reads (SELECT), writes (UPDATE, DELETE, INSERT) and other
// (BEGIN, COMMIT).
func (w *Workload) QueriesPerTransaction() (reads, writes, other int) {
	return w.shape.reads(), w.shape.writes(), w.shape.other()
}

// Figures implements workload.Workload: QPS as sysbench counts it (every
// statement of a committed transaction, BEGIN and COMMIT included), mean and
// 95th-percentile latency (sysbench's default percentile), and errors and
// reconnects per second. The runner adds TPS and the 99th percentile.
func (w *Workload) Figures(counts []metrics.TxCounts, d time.Duration) []results.Figure {
	if len(counts) == 0 || d <= 0 {
		return nil
	}
	c := counts[0]
	secs := d.Seconds()
	figs := []results.Figure{results.FigureQPS.With(float64(c.Committed*int64(w.shape.queries())) / secs)}
	if c.Latency.TotalCount() > 0 {
		figs = append(figs,
			results.FigureLatencyMean.With(c.Latency.Mean()/1000),
			results.FigureLatencyP95.With(float64(c.Latency.ValueAtQuantile(95))/1000),
		)
	}
	return append(figs,
		results.FigureErrorsPerSec.With(float64(c.Failed+c.Retries)/secs),
		results.FigureReconnectsPerSec.With(float64(c.Reconnects)/secs),
	)
}

// FigureNames implements workload.Workload.
func (w *Workload) FigureNames() []results.FigureName {
	return []results.FigureName{results.FigureQPS, results.FigureLatencyMean, results.FigureLatencyP95,
		results.FigureErrorsPerSec, results.FigureReconnectsPerSec}
}

// shape is what one transaction of a workload does, in sysbench's order.
type shape struct {
	pointSelects, simpleRanges, sumRanges, orderRanges, distinctRanges int
	indexUpdates, nonIndexUpdates, deleteInserts                       int
	trx                                                                bool
}

// shape applies the workload's choice of query groups to the counts:
// oltp_point_select sends one point select per transaction and
// oltp_update_index its index updates, both without BEGIN and COMMIT.
func (c Config) shape() shape {
	var s shape
	reads := func() {
		s.pointSelects = c.PointSelects
		if c.RangeSelects {
			s.simpleRanges, s.sumRanges, s.orderRanges, s.distinctRanges = c.SimpleRanges, c.SumRanges, c.OrderRanges, c.DistinctRanges
		}
	}
	writes := func() {
		s.indexUpdates, s.nonIndexUpdates, s.deleteInserts = c.IndexUpdates, c.NonIndexUpdates, c.DeleteInserts
	}
	switch c.Workload {
	case ReadWrite:
		reads()
		writes()
		s.trx = !c.SkipTrx
	case ReadOnly:
		reads()
		s.trx = !c.SkipTrx
	case WriteOnly:
		writes()
		s.trx = !c.SkipTrx
	case PointSelect:
		s.pointSelects = 1
	case UpdateIndex:
		s.indexUpdates = c.IndexUpdates
	}
	return s
}

func (s shape) reads() int {
	return s.pointSelects + s.simpleRanges + s.sumRanges + s.orderRanges + s.distinctRanges
}

func (s shape) writes() int { return s.indexUpdates + s.nonIndexUpdates + 2*s.deleteInserts }

func (s shape) other() int {
	if s.trx {
		return 2
	}
	return 0
}

func (s shape) queries() int { return s.reads() + s.writes() + s.other() }

// writesData says whether the transaction changes rows, which decides how
// SQLite begins it.
func (s shape) writesData() bool { return s.writes() > 0 }

func distributionNames() []string {
	names := make([]string, 0, len(distributions))
	for n := range distributions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
