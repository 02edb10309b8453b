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
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/txerr"
	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

// Config is what a user chooses for a TPC-C run.
type Config struct {
	Warehouses int `json:"warehouses" toml:"warehouses"`
	// KeyingThinking adds the specification's keying and think times (5.2.5.7);
	// without them each user runs transactions back to back.
	KeyingThinking bool `json:"keying_thinking" toml:"keying_thinking"`
	// Terminals is the number of terminals of a run with keying and think
	// times (0: ten per warehouse, as the specification has).
	Terminals int `json:"terminals,omitempty" toml:"terminals"`
	// Pool is how many connections the terminals share through the
	// transaction monitor; nil gives each terminal a connection.
	Pool *int `json:"pool,omitempty" toml:"pool"`
	// TerminalsOverSpec allows more than ten terminals per warehouse.
	TerminalsOverSpec bool `json:"terminals_over_spec,omitempty" toml:"terminals_over_spec"`
	// Loading is the data's seed, how many warehouses load at once, and
	// whether a dataset already loaded with the same identity is kept.
	workload.Loading
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
	errs = append(errs, c.Loading.Validate()...)
	if c.Terminals < 0 {
		errs = append(errs, workload.Invalid("terminals", c.Terminals, "must be 0 (ten per warehouse) or more"))
	}
	if c.Pool != nil && *c.Pool < 1 {
		errs = append(errs, workload.Invalid("pool", *c.Pool, "the terminals need at least 1 connection to share: give 1 or more, or leave --pool out for one connection per terminal"))
	}
	if !c.KeyingThinking {
		if c.Terminals > 0 {
			errs = append(errs, workload.Invalid("terminals", c.Terminals, "terminals key and think: add --keying-thinking, or set back-to-back users with --users"))
		}
		if c.Pool != nil {
			errs = append(errs, workload.Invalid("pool", *c.Pool, "only terminals that key and think share connections (back to back, each user needs one): add --keying-thinking, or drop --pool"))
		}
	}
	if n, most := c.terminals(), c.Warehouses*TerminalsPerWarehouse; c.KeyingThinking && c.Warehouses >= 1 && n > most && !c.TerminalsOverSpec {
		errs = append(errs, workload.Invalid("terminals", n, "more than the specification's %d per warehouse (%d warehouses x %d = %d): lower it, raise --warehouses to %d, or allow it with --terminals-over-spec",
			TerminalsPerWarehouse, c.Warehouses, TerminalsPerWarehouse, most, (n+TerminalsPerWarehouse-1)/TerminalsPerWarehouse))
	}
	return errs
}

// TerminalsPerWarehouse is the specification's number of terminals per
// warehouse (4.2.2), the default with keying and think times.
const TerminalsPerWarehouse = 10

// terminals is how many terminals a paced run has.
func (c Config) terminals() int {
	if c.Terminals > 0 {
		return c.Terminals
	}
	return c.Warehouses * TerminalsPerWarehouse
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

	// pacingScale multiplies keying and think times (0 or 1: the
	// specification's); only tests shorten them.
	pacingScale float64

	mu        sync.Mutex
	load      Constants // as stored with the data
	run       Constants
	haveConst bool
	sqliteQueues
	// sockets overrides the engine's choice between blocking sockets and
	// Go's network poller for every connection, so that tests and
	// measurements can compare the two; the zero value keeps it.
	sockets sqlclient.Sockets
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
func (w *Workload) Figures(counts []metrics.TxCounts, d time.Duration) []results.Figure {
	var all int64
	for _, c := range counts {
		all += c.Committed
	}
	var nopm float64
	if len(counts) > TxNewOrder {
		nopm = metrics.PerMinute(counts[TxNewOrder].Committed, d)
	}
	return []results.Figure{results.FigureTPM.With(metrics.PerMinute(all, d)), results.FigureNOPM.With(nopm)}
}

// FigureNames implements workload.Workload.
func (w *Workload) FigureNames() []results.FigureName {
	return []results.FigureName{results.FigureTPM, results.FigureNOPM}
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
	// newExecutor opens a connection for the session d was given for
	// (sqlclient.Dialect.ForUser), its sockets of the kind d chose.
	newExecutor(ctx context.Context, inst engine.Instance, d *sqlclient.Dialect) (executor, error)
	// notes explain engine-specific choices for the results.
	notes() []string
	// sharesProcs says whether the sessions run lighter sharing the Ps in
	// force than each keeping one (vusers.Users.ShareProcs).
	sharesProcs() bool
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

// SharesProcs says whether the sessions on inst share the Ps in force
// rather than each keeping one (see vusers.Users.ShareProcs): on MariaDB,
// where it was measured lighter, unless the sockets were set blocking.
func (w *Workload) SharesProcs(inst engine.Instance) bool {
	b, err := w.backend(inst)
	return err == nil && w.sockets != sqlclient.SocketsBlocking && b.sharesProcs()
}

// Reusing reports whether the run keeps an existing dataset (no new space needed).
func (w *Workload) Reusing() bool { return w.cfg.Reuse }

// EngineNotes describe how the backend for inst runs TPC-C, for the results.
func (w *Workload) EngineNotes(inst engine.Instance) []string {
	b, err := w.backend(inst)
	if err != nil {
		return nil
	}
	notes := b.notes()
	if d, err := w.dialect(inst); err == nil {
		if note := d.SocketsNote(); note != "" {
			notes = append(notes, note)
		}
	}
	return notes
}

// dialect is inst's engine's dialect for TPC-C's connections, with the
// workload's choice of sockets; ForUser then chooses each session's socket,
// as it does for sysbench's.
func (w *Workload) dialect(inst engine.Instance) (*sqlclient.Dialect, error) {
	d, err := sqlclient.For("tpcc", inst, &w.writers)
	if err != nil {
		return nil, err
	}
	d.Sockets = w.sockets
	return d, nil
}

// NewSession implements workload.Workload. User u is terminal u (see
// newTerminal) on a connection of its own.
func (w *Workload) NewSession(ctx context.Context, inst engine.Instance, user int, rec *metrics.Recorder) (workload.Session, error) {
	t, err := w.newTerminal(user)
	if err != nil {
		return nil, err
	}
	c, err := w.connect(ctx, inst, user, rec)
	if err != nil {
		return nil, fmt.Errorf("user %d: connect: %w", user+1, err)
	}
	return &session{terminal: *t, conn: c}, nil
}

// newTerminal returns terminal u: its home warehouse is u mod W + 1,
// spreading terminals evenly over the warehouses, and its Stock-Level
// district is constant (2.8.1.1).
func (w *Workload) newTerminal(user int) (*terminal, error) {
	w.mu.Lock()
	have, run := w.haveConst, w.run
	w.mu.Unlock()
	if !have {
		return nil, errors.New("tpcc: Prepare must run before sessions start")
	}
	return &terminal{
		w:           w,
		r:           newRnd(w.cfg.Seed+uint64(user)*7919+1, uint64(user)+0x9e3779b9, run),
		wID:         user%w.cfg.Warehouses + 1,
		slDID:       (user/w.cfg.Warehouses)%DistrictsPerWarehouse + 1,
		pacing:      w.cfg.KeyingThinking,
		pacingScale: w.pacingScale,
		nowFunc:     time.Now,
	}, nil
}

// connect opens the connection of session n (a user back to back, or a
// connection of the monitor's pool), whose socket sqlclient's
// Dialect.ForUser chooses as for every other workload's sessions.
func (w *Workload) connect(ctx context.Context, inst engine.Instance, n int, rec *metrics.Recorder) (conn, error) {
	b, err := w.backend(inst)
	if err != nil {
		return conn{}, err
	}
	d, err := w.dialect(inst)
	if err != nil {
		return conn{}, err
	}
	user := d.ForUser(n)
	exec, err := b.newExecutor(ctx, inst, user)
	if err != nil {
		return conn{}, err
	}
	return conn{classify: txerr.For(inst), exec: exec, rec: rec, inPoller: user.InPoller()}, nil
}

var _ workload.Monitored = (*Workload)(nil)

// Pool implements workload.Monitored: with keying and think times, a
// step's terminals reach the database through a transaction monitor of
// Config.Pool connections (one per terminal when none is set, at most one
// per terminal); back to back, each user keeps a connection of its own.
func (w *Workload) Pool(terminals int) int {
	if !w.cfg.KeyingThinking {
		return 0
	}
	if w.cfg.Pool == nil {
		return terminals
	}
	return min(*w.cfg.Pool, terminals)
}

// NewTerminal implements workload.Monitored.
func (w *Workload) NewTerminal(user int) (workload.Terminal, error) { return w.newTerminal(user) }

// NewConnection implements workload.Monitored.
func (w *Workload) NewConnection(ctx context.Context, inst engine.Instance, n int, rec *metrics.Recorder) (workload.Session, error) {
	c, err := w.connect(ctx, inst, n, rec)
	if err != nil {
		return nil, fmt.Errorf("pooled connection %d: %w", n+1, err)
	}
	return &pooledConn{c}, nil
}

// TerminalRate implements workload.Monitored: a terminal's transactions per
// second when the database answers at once, the inverse of its mean cycle
// (keying time plus think time over the mix).
func (w *Workload) TerminalRate() float64 { return 1 / w.meanCycle().Seconds() }

// meanCycle is a terminal's mean keying plus think time over the standard
// mix (about 21 s at the specification's times); a think time's mean is
// its distribution's, truncated at ten times the mean.
func (w *Workload) meanCycle() time.Duration {
	var sum float64
	for _, t := range mixDeck {
		p := pacingFor[t]
		sum += float64(p.Keying) + float64(p.ThinkMean)*(1-math.Exp(-10))
	}
	scale := w.pacingScale
	if scale <= 0 {
		scale = 1
	}
	return time.Duration(sum / float64(len(mixDeck)) * scale)
}

// runConstants derives and remembers the run-time constants from the load-time ones.
func (w *Workload) setConstants(load Constants) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.load = load
	w.run = RunConstants(load, rand.New(rand.NewPCG(w.cfg.Seed, 0xC0FFEE)))
	w.haveConst = true
}
