package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"dbio/internal/engine"
	"dbio/internal/iolimit"
	"dbio/internal/livemetrics"
	"dbio/internal/progress"
	"dbio/internal/runner"
	"dbio/internal/secret"
	"dbio/internal/steady"
	"dbio/internal/target"
	"dbio/internal/telemetry"
	"dbio/internal/units"
	"dbio/internal/workload"
)

// runFlags are the flags every database workload command shares: where the
// engine runs, which users, how long.
type runFlags struct {
	// engines are the engines --engine chooses from.
	engines *engine.Registry
	engine  string
	target  string
	// targets are every --target given, in order (target is the last): a
	// run on several hosts has one per host.
	targets []string
	// onHosts says the targets are on hosts: each host's dbio checks its
	// own target and engine, not this machine.
	onHosts   bool
	logTarget string
	users     string
	rampup    time.Duration
	step      time.Duration
	// rampupUntil ends each ramp-up at steady state (registerSteady);
	// steadyWindow and steadyRamp are its window and the part left out.
	rampupUntil  string
	steadyWindow time.Duration
	steadyRamp   time.Duration
	// precision ends each measurement once its figures are precise, after
	// at least precisionMin (registerSteady).
	precision    string
	precisionMin time.Duration
	steadyFlags  bool
	results      string
	name         string
	bufferPool   string
	// serverMemory caps the managed server's whole memory, page cache included.
	serverMemory string
	dsn          string
	dsnFile      string
	// dropAfter drops the database dbio created on the --dsn server when
	// the run ends.
	dropAfter  bool
	database   string
	transport  string
	settings   []string
	skipChecks bool
	limit      string
	prealloc   bool
	// createTarget makes a target that does not exist yet, instead of refusing it.
	createTarget bool
	// flags tells which flags the user gave.
	flags *pflag.FlagSet
}

func (f *runFlags) register(fs *pflag.FlagSet, engines *engine.Registry, defaults runFlags) {
	*f = defaults
	f.engines, f.flags = engines, fs
	fs.StringVarP(&f.engine, "engine", "e", defaults.engine, "database engine: "+strings.Join(engines.Names(), ", "))
	fs.VarP(&targetsValue{last: &f.target, all: &f.targets}, "target", "t", "directory on the storage under test; dbio works only in its own <target>/dbio subdirectory")
	fs.StringVar(&f.logTarget, "log-target", "", "directory for the WAL / redo log (server engines), when it should sit on other storage")
	fs.StringVarP(&f.users, "users", "u", defaults.users, "virtual-user sequence, one measured step per count, e.g. 1,2,4,8")
	fs.DurationVar(&f.rampup, "ramp-time", defaults.rampup, "warm-up before each step's measurement, excluded from its figures")
	fs.DurationVar(&f.step, "runtime", defaults.step, "measured time of each step (each user count)")
	alias(fs, "rampup", "ramp-time")
	alias(fs, "step", "runtime")
	fs.StringVar(&f.results, "results", "results", "directory that receives the results directory of this run")
	fs.StringVar(&f.name, "name", "", "name of the results directory (default: workload-engine)")
	fs.StringVar(&f.bufferPool, "buffer-pool", "", "engine page cache: shared_buffers, innodb_buffer_pool_size or SQLite cache_size, e.g. 256MB or 2GB (default: engine default)")
	fs.StringVar(&f.serverMemory, "server-memory", "", "cap the managed server's whole memory, its page cache included, with a memory cgroup, e.g. 512MB or 4GB: a machine with less memory, apart from --buffer-pool (default: no cap)")
	fs.StringVar(&f.dsn, "dsn", "", "use an existing server instead of a managed one (postgres://..., mysql://... or user:pass@tcp(host:port)/; the DSN chooses the engine when -e is not given), recorded without its password; keep the password off the command line with PGPASSWORD or MYSQL_PWD, or --dsn-file")
	fs.StringVar(&f.dsnFile, "dsn-file", "", "read the --dsn from this file (one line; make it readable by you alone)")
	fs.BoolVar(&f.dropAfter, "drop-after", false, "with --dsn: drop the database dbio created on your server when the run ends (without it, the run ends saying what it left there)")
	fs.StringVar(&f.database, "database", "", "database dbio creates and owns on the engine (default dbio_<workload>)")
	fs.StringVar(&f.transport, "transport", "socket", "how dbio reaches a managed server: socket (Unix socket) or tcp (loopback)")
	fs.StringArrayVar(&f.settings, "setting", nil, "engine setting name=value, applied as given and recorded (repeatable)")
	fs.BoolVar(&f.skipChecks, "skip-checks", false, "skip the consistency checks after the run (recorded in the results)")
	fs.BoolVar(&f.prealloc, "preallocate", false, "reserve the data and log files' space up front where the engine allows it (SQLite: fallocate beyond EOF), to A/B its effect on fragmentation")
	fs.BoolVar(&f.createTarget, "create-target", defaults.createTarget, "create --target (and --log-target, --backup-target) when it does not exist; without it a missing target is refused, so that a typo or an unmounted mount point never benchmarks the disk underneath")
	fs.StringVar(&f.limit, "limit", "", "emulate a storage class on the targets' disks with a block-I/O cgroup: riops=N,wiops=N,rbps=SIZE,wbps=SIZE or a preset ("+strings.Join(iolimit.PresetNames(), ", ")+")")
}

// targetsValue is --target: the last one given is the run's target (as a
// plain string flag would have it), and every one given is kept for a run
// on several hosts (--target h1:/srv/db --target h2:/srv/db).
type targetsValue struct {
	last *string
	all  *[]string
}

func (v *targetsValue) String() string {
	if v.last == nil {
		return ""
	}
	return *v.last
}

func (v *targetsValue) Set(s string) error {
	*v.last = s
	*v.all = append(*v.all, s)
	return nil
}

func (v *targetsValue) Type() string { return "string" }

// registerSteady adds the flags that end a ramp-up at steady state, for the
// commands whose steps are user steps (not the scenarios, whose phases are
// their own).
func (f *runFlags) registerSteady(fs *pflag.FlagSet) {
	f.steadyFlags = true
	fs.StringVar(&f.rampupUntil, "ramp-until", "", "end each ramp-up once per-second throughput is steady, in fio's form: SERIES:LIMIT (largest deviation from the window's mean) or SERIES_slope:LIMIT (least-squares slope per second), LIMIT a number or % of the mean, e.g. nopm_slope:0.5% or tps:10%; --ramp-time is then the longest a ramp-up lasts")
	fs.DurationVar(&f.steadyWindow, "steady-window", runner.DefaultSteadyWindow, "the window --ramp-until judges (fio's steadystate_duration)")
	fs.DurationVar(&f.steadyRamp, "steady-ramp", 0, "the start of each ramp-up --ramp-until leaves out of every window (fio's steadystate_ramp_time)")
	fs.StringVar(&f.precision, "precision", "", "end each measurement once its figures are precise: the 95 % confidence interval of each within ±P % of it (read from the per-second series, their memory allowed for) and throughput steady; P% alone for the headline throughput, SERIES:P% (nopm:2%) or TYPE:pQ:P% (new_order:p99:10%), several with commas; --runtime is then the longest a measurement lasts")
	fs.DurationVar(&f.precisionMin, "precision-min", runner.DefaultPrecisionMin, "the shortest measurement --precision allows, whatever its intervals say")
}

// resolved is what runFlags turn into.
type resolved struct {
	engine  engine.Engine
	options engine.Options
	users   []int
	limits  iolimit.Limits
	// steady is the ramp-up until steady state, nil for a fixed ramp-up.
	steady *runner.SteadyRampUp
	// precision is the measurement until precise, nil for a fixed one.
	precision *runner.PrecisionBound
}

// resolve validates every flag at once; the error names each bad flag and its accepted form.
func (f *runFlags) resolve(sys target.SysFS, workloadName string) (resolved, error) {
	var r resolved
	var errs []error
	if err := f.readDSNFile(); err != nil {
		errs = append(errs, err)
	}
	e, err := f.chooseEngine()
	if err != nil {
		errs = append(errs, err)
	}
	r.engine = e
	if r.users, err = workload.ParseUsers(f.users); err != nil {
		errs = append(errs, fmt.Errorf("--users: %w", err))
	}
	if f.rampup < 0 {
		errs = append(errs, fmt.Errorf("--ramp-time %s: must not be negative (e.g. 30s, 2m)", f.rampup))
	}
	if f.step <= 0 {
		errs = append(errs, fmt.Errorf("--runtime %s: must be a positive duration (e.g. 2m, 90s)", f.step))
	}
	st, steadyErrs := f.resolveSteady()
	r.steady = st
	errs = append(errs, steadyErrs...)
	pr, precisionErrs := f.resolvePrecision(st)
	r.precision = pr
	errs = append(errs, precisionErrs...)
	if f.dsn == "" && strings.TrimSpace(f.target) == "" {
		errs = append(errs, errors.New("--target: required: the directory on the storage under test"))
	}
	if f.dsn != "" && f.flags != nil && !f.flags.Changed("transport") {
		// An existing server is reached the way its DSN says.
		f.transport = ""
	}
	if f.transport != "socket" && f.transport != "tcp" && !(f.transport == "" && f.dsn != "") {
		errs = append(errs, fmt.Errorf("--transport %q: use socket or tcp", f.transport))
	}
	r.options = engine.Options{DSN: f.dsn, Transport: f.transport, Database: f.database, Fresh: true}
	if r.options.Database == "" {
		r.options.Database = "dbio_" + workloadName
	}
	if f.bufferPool != "" {
		n, err := units.ParseBytes(f.bufferPool)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("--buffer-pool %q: use a size such as 256MB or 2GB", f.bufferPool))
		}
		r.options.BufferPool = n
	}
	if f.serverMemory != "" {
		n, err := units.ParseBytes(f.serverMemory)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("--server-memory %q: use a size such as 512MB or 4GB", f.serverMemory))
		}
		r.options.ServerMemory = n
	}
	if len(f.settings) > 0 {
		r.options.Settings = map[string]string{}
		for _, s := range f.settings {
			k, v, ok := strings.Cut(s, "=")
			if !ok || strings.TrimSpace(k) == "" {
				errs = append(errs, fmt.Errorf("--setting %q: use name=value", s))
				continue
			}
			r.options.Settings[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if f.prealloc {
		r.options.Preallocate = engine.PreallocateAuto
	}
	if f.limit != "" {
		l, err := iolimit.Parse(f.limit)
		if err != nil {
			errs = append(errs, fmt.Errorf("--limit: %w", err))
		}
		r.limits = l
	}
	errs = append(errs, f.preflight(sys, e, r)...)
	if len(errs) > 0 {
		return r, usageErrors(errs)
	}
	return r, nil
}

// chooseEngine is the engine --engine names, or, for a --dsn without
// --engine, the one the DSN is written for: its scheme (postgres://,
// mysql://, mariadb://) or its form (user:password@tcp(host:3306)/ is
// MariaDB's and MySQL's driver's, host=... keywords PostgreSQL's). An
// --engine the DSN contradicts is refused naming both.
func (f *runFlags) chooseEngine() (engine.Engine, error) {
	given := f.flags == nil || f.flags.Changed("engine")
	var forDSN engine.Engine
	if f.dsn != "" {
		forDSN = f.engines.ForDSN(f.dsn)
	}
	if f.dsn != "" && !given {
		if forDSN == nil {
			return nil, fmt.Errorf("--dsn %s: dbio cannot tell the engine from it: give --engine (-e postgres, -e mariadb), or write it as postgres://user@host:5432/db or mysql://user@host:3306/", secret.RedactDSN(f.dsn))
		}
		f.engine = forDSN.Name()
		return forDSN, nil
	}
	e, err := f.engines.Lookup(f.engine)
	if err != nil {
		return nil, fmt.Errorf("--engine: %w", err)
	}
	if forDSN == nil {
		return e, nil
	}
	if forms, ok := e.(engine.DSNForms); ok {
		if _, ours := forms.DSNScheme(f.dsn); ours {
			return e, nil
		}
	}
	return nil, fmt.Errorf("--engine %s contradicts --dsn %s, which is written for %s: drop --engine (the DSN chooses it), or give a DSN for %s", f.engine, secret.RedactDSN(f.dsn), forDSN.Name(), f.engine)
}

// resolveSteady reads --ramp-until and its window; every problem names
// its flag. Whether the workload records the series, and whether the
// window fits in --ramp-time, the run's preflight checks.
func (f *runFlags) resolveSteady() (*runner.SteadyRampUp, []error) {
	if !f.steadyFlags {
		return nil, nil
	}
	var errs []error
	if f.rampupUntil == "" {
		for _, name := range []string{"steady-window", "steady-ramp"} {
			if f.flags != nil && f.flags.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s: applies only with --ramp-until: add --ramp-until tps_slope:1%% (say) or drop --%s", name, name))
			}
		}
		return nil, errs
	}
	c, err := steady.Parse(f.rampupUntil)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("--ramp-until: %w", err))
	case c.OnSeconds() != nil:
		errs = append(errs, fmt.Errorf("--ramp-until %s: %w", f.rampupUntil, c.OnSeconds()))
	}
	if f.steadyWindow < steady.MinWindow*time.Second || f.steadyWindow%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--steady-window %s: use whole seconds, at least %ds (e.g. 20s)", f.steadyWindow, steady.MinWindow))
	}
	if f.steadyRamp < 0 || f.steadyRamp%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--steady-ramp %s: use whole seconds, 0 or more (e.g. 10s)", f.steadyRamp))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &runner.SteadyRampUp{Criterion: c, Window: f.steadyWindow, Ignore: f.steadyRamp}, nil
}

// resolvePrecision reads --precision and its minimum; every problem names
// its flag. Whether the workload records the figures named, the run's
// preflight checks. The steadiness it also asks is judged on
// --ramp-until's series when given (the headline throughput otherwise).
func (f *runFlags) resolvePrecision(st *runner.SteadyRampUp) (*runner.PrecisionBound, []error) {
	if !f.steadyFlags {
		return nil, nil
	}
	if f.precision == "" {
		if f.flags != nil && f.flags.Changed("precision-min") {
			return nil, []error{errors.New("--precision-min: applies only with --precision: add --precision 2% (say) or drop --precision-min")}
		}
		return nil, nil
	}
	var errs []error
	p, err := steady.ParsePrecision(f.precision)
	if err != nil {
		errs = append(errs, fmt.Errorf("--precision: %w", err))
	}
	if f.precisionMin < runner.MinPrecisionMin || f.precisionMin%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--precision-min %s: use whole seconds, at least %s (e.g. 30s), so that the interval has ten batches of a second or more", f.precisionMin, runner.MinPrecisionMin))
	} else if f.step > 0 && f.precisionMin > f.step {
		errs = append(errs, fmt.Errorf("--precision-min %s is longer than --runtime %s, the longest a measurement lasts: lengthen --runtime or shorten --precision-min", f.precisionMin, f.step))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &runner.PrecisionBound{Precision: p, Min: f.precisionMin, Series: steadySeries(st)}, nil
}

// readDSNFile takes the DSN from --dsn-file, so that its password is on no
// command line (which every user of the machine may read).
func (f *runFlags) readDSNFile() error {
	if f.dsnFile == "" {
		return nil
	}
	if f.dsn != "" {
		return errors.New("--dsn-file: give the DSN once, with --dsn or with --dsn-file")
	}
	b, err := os.ReadFile(f.dsnFile)
	if err != nil {
		return fmt.Errorf("--dsn-file: %w: write the DSN into that file, or give it with --dsn", err)
	}
	f.dsn = strings.TrimSpace(string(b))
	if f.dsn == "" {
		return fmt.Errorf("--dsn-file %s: the file is empty: write the DSN into it (one line)", f.dsnFile)
	}
	return nil
}

// resolveWith validates the shared flags together with a command's own
// problems, so that every bad flag is reported at once.
func (f *runFlags) resolveWith(sys target.SysFS, workloadName string, problems []error) (resolved, error) {
	r, err := f.resolve(sys, workloadName)
	if err != nil {
		var ue *usageError
		if !errors.As(err, &ue) {
			return r, err
		}
		problems = append(problems, ue)
	}
	if len(problems) > 0 {
		return r, usageErrors(problems)
	}
	return r, nil
}

// usageErrors joins several validation problems into one usage error, one per line.
func usageErrors(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	sort.Strings(msgs)
	return &usageError{msg: strings.Join(msgs, "\n  ")}
}

// runnerEnv builds the runner's environment from the app, with the live
// figures served over HTTP when --metrics-addr asks for it; done stops
// serving them.
func runnerEnv(app *App) (env runner.Env, done func(), err error) {
	env = runner.Env{
		Out:      app.Stdout,
		Progress: progress.New(app.Stdout),
		Now:      app.Now,
		Version:  version(),
		HostFS:   telemetry.HostFS(),
		SysFS:    app.SysFS,
		Getenv:   app.Getenv,
	}
	if app.MetricsAddr == "" {
		return env, func() {}, nil
	}
	srv, err := livemetrics.Listen(app.MetricsAddr)
	if err != nil {
		return env, nil, usagef("%v", err)
	}
	fmt.Fprintf(app.Stdout, "live figures: %s (Prometheus text format, one gauge per per-second figure)\n", srv.URL())
	env.Live = srv
	return env, func() { _ = srv.Close() }, nil
}
