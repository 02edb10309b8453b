package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/fio"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/target"
	"dbio/internal/units"
)

func init() { commandConstructors = append(commandConstructors, newDiskCmd) }

// diskFlags are dbio disk's flags as typed; diskConfig turns them into an fio.Config.
type diskFlags struct {
	targets     []string
	profile     string
	group       bool
	runtime     time.Duration
	ramp        time.Duration
	size        string
	iodepth     []string
	jobs        int
	engine      string
	bs          []string
	rw          []string
	readPct     int
	rates       []string
	latencyMax  time.Duration
	latencyStat string
	steadyState string
	ssWindow    time.Duration
	ssRamp      time.Duration
	resultsBase string
	name        string
	dryRun      bool
	// createTarget makes missing targets instead of refusing them.
	createTarget bool
}

func newDiskCmd(app *App) *cobra.Command {
	var f diskFlags
	cmd := &cobra.Command{
		Use:   "disk --target DIR [--target DIR...] [--profile NAME]",
		Short: "Characterize storage with fio: four corners, SQLIO matrix, mixes, rate curves, steady state",
		Long:  diskLong(),
		Example: `  dbio disk --target /mnt/nvme --target /mnt/sata --profile four-corners
  dbio disk --target /mnt/nvme --profile sqlio --latency-max 20ms
  dbio disk --target /mnt/nvme --profile mix --read-pct 70 --bs 4k,8k,16k,32k,64k,128k,256k --iodepth 8 --jobs 4
  dbio disk --target /mnt/nvme --profile curve --rw randread --bs 4k
  dbio disk --target /mnt/nvme --profile precondition`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := diskConfig(cmd, f, app)
			if err != nil {
				return err
			}
			if f.dryRun {
				return diskDryRun(app, cfg)
			}
			return runDisk(cmd.Context(), app, cfg, f)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.targets, "target", nil, "directory on the storage to measure (repeat to compare several side by side)")
	fs.StringVar(&f.profile, "profile", "four-corners", "fio profile: "+strings.Join(fio.BuiltinProfiles().Names(), ", "))
	fs.BoolVar(&f.group, "group", false, "run each point on all targets at once and report the aggregate (a drive group)")
	fs.DurationVar(&f.runtime, "runtime", 0, "measured time per point (default: the profile's, 1m; 30m cap for precondition)")
	fs.DurationVar(&f.ramp, "ramp", fio.DefaultRamp, "warm-up before each point, excluded from its figures")
	fs.StringVar(&f.size, "size", "", "working file per target, e.g. 8G (default: see above)")
	fs.StringSliceVar(&f.iodepth, "iodepth", nil, "I/Os in flight per job; a list for sqlio and mix (e.g. 1,8,32,64)")
	fs.IntVar(&f.jobs, "jobs", 0, "fio jobs (I/O threads) per target (default: the profile's)")
	fs.StringVar(&f.engine, "ioengine", "", "fio ioengine (default io_uring, falling back to libaio, then psync)")
	// --engine names the database everywhere else; here it was fio's
	// ioengine, and still works as such for a while.
	fs.StringVar(&f.engine, "engine", "", "fio ioengine (old name of --ioengine)")
	_ = fs.MarkDeprecated("engine", "use --ioengine: --engine names the database engine in every other command")
	fs.StringSliceVar(&f.bs, "bs", nil, "block sizes, e.g. 4k,8k,64k (sqlio, mix: a list; curve, precondition: one)")
	fs.StringSliceVar(&f.rw, "rw", nil, "access patterns: randread, randwrite, read, write, randrw, rw")
	fs.IntVar(&f.readPct, "read-pct", 70, "share of reads in a mix, in percent (mix, curve with randrw)")
	fs.StringSliceVar(&f.rates, "rates", nil, "curve rates in percent of the measured maximum (default 10,20,...,120)")
	fs.DurationVar(&f.latencyMax, "latency-max", 0, "latency bound of the best-within table (default 20ms; sqlio always shows it)")
	fs.StringVar(&f.latencyStat, "latency-stat", "", "statistic the bound applies to: mean (default), p50, p95, p99, p99.9")
	fs.StringVar(&f.steadyState, "steady-state", "", "end each unthrottled point at fio's steady state, e.g. iops_slope:0.2% (alone: 10% drift over the window)")
	fs.Lookup("steady-state").NoOptDefVal = "auto"
	fs.DurationVar(&f.ssWindow, "ss-window", fio.DefaultSteadyWindow, "window fio judges steady state over (fio's steadystate_duration)")
	fs.DurationVar(&f.ssRamp, "ss-ramp", 0, "time each point runs before fio starts judging steady state (fio's steadystate_ramp_time)")
	fs.StringVar(&f.resultsBase, "results", "results", "directory the results directory is created in")
	fs.StringVar(&f.name, "name", "", "name of the results directory (default disk-<profile>)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the points and their estimated time, touch nothing")
	fs.BoolVar(&f.createTarget, "create-target", false, "create each --target that does not exist; without it a missing target is refused, so that a typo or an unmounted mount point never benchmarks the disk underneath")
	return cmd
}

func diskLong() string {
	var b strings.Builder
	b.WriteString(`Measure what a storage does with fio (Debian's fio 3.33; install it
with '` + fio.InstallHint + `'). Each profile is a documented plan of fio jobs;
every point stores its job file (re-run it with fio), fio's json+ report, its
figures and per-second IOPS, MB/s and latency in the results directory.

I/O is O_DIRECT with io_uring (libaio, then psync as fallbacks); a filesystem
that refuses O_DIRECT is measured buffered, with a warning in the results.

Profiles:
`)
	profiles := fio.BuiltinProfiles()
	for _, name := range profiles.Names() {
		p, _ := profiles.Lookup(name)
		b.WriteString("\n  " + name + "\n")
		b.WriteString(diskIndent(diskWrap(p.Describe(), 74), "    "))
	}
	b.WriteString("\nWorking file:\n\n")
	b.WriteString(diskIndent(fio.SizeRule, "  "))
	return b.String()
}

func diskWrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteString("\n")
			n = 0
		}
		if n > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

func diskIndent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// diskConfig turns the flags into a validated configuration, reporting every
// bad flag at once as a usage error.
func diskConfig(cmd *cobra.Command, f diskFlags, app *App) (fio.Config, error) {
	var errs []error
	changed := cmd.Flags().Changed
	cfg := fio.Config{
		Profile: f.profile, Targets: f.targets, Group: f.group, Runtime: f.runtime, Jobs: f.jobs,
		Engine: f.engine, RW: f.rw, LatencyMax: f.latencyMax, LatencyStat: fio.LatencyStat(f.latencyStat),
		SteadyState: f.steadyState, Now: app.Now, SysFS: app.SysFS,
	}
	if changed("ramp") {
		ramp := f.ramp
		cfg.Ramp = &ramp
	}
	if changed("ss-window") {
		cfg.SteadyWindow = f.ssWindow
	}
	if changed("ss-ramp") {
		cfg.SteadyRamp = f.ssRamp
	}
	if changed("read-pct") {
		pct := f.readPct
		cfg.ReadPct = &pct
	}
	if f.size != "" {
		n, err := units.ParseBytes(f.size)
		if err != nil {
			errs = append(errs, fmt.Errorf("--size: %w", err))
		} else if n <= 0 {
			errs = append(errs, fmt.Errorf("--size %s: give the working file's size, e.g. 4G, or leave --size out for the default", f.size))
		}
		cfg.Size = n
	}
	if changed("runtime") && f.runtime == 0 {
		errs = append(errs, errors.New("--runtime 0s: give the measured time of each point, e.g. 30s, or leave --runtime out for the profile's"))
	}
	for _, s := range f.bs {
		n, err := units.ParseBytes(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--bs: %w", err))
			continue
		}
		cfg.BlockSizes = append(cfg.BlockSizes, n)
	}
	for _, s := range f.iodepth {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, fmt.Errorf("--iodepth %q: use whole numbers, e.g. 1,8,32,64", s))
			continue
		}
		cfg.IODepths = append(cfg.IODepths, n)
	}
	for _, s := range f.rates {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("--rates %q: use percentages of the measured maximum, e.g. 10,50,100,120", s))
			continue
		}
		cfg.RatePcts = append(cfg.RatePcts, v)
	}
	errs = append(errs, cfg.Validate(fio.BuiltinProfiles())...)
	if !f.dryRun {
		// A dry run touches nothing and may plan for targets not mounted yet.
		for _, t := range f.targets {
			errs = append(errs, runner.Places{Data: t, Create: f.createTarget, Subdirs: []string{fio.WorkSubdir}}.Problems(app.SysFS)...)
		}
		errs = append(errs, runner.Places{Results: f.resultsBase}.Problems(app.SysFS)...)
	}
	if len(errs) > 0 {
		return cfg, usageErrors(errs)
	}
	return cfg, nil
}

func diskDryRun(app *App, cfg fio.Config) error {
	plan, err := fio.NewPlan(cfg, fio.BuiltinProfiles())
	if err != nil {
		return usagef("%v", err)
	}
	fmt.Fprintf(app.Stdout, "profile %s: %d points, about %s of fio time (plus laying out the working file)\n",
		plan.Profile.Name(), len(plan.Points), plan.Duration())
	for i, p := range plan.Points {
		fmt.Fprintf(app.Stdout, "%3d  %-28s %s\n", i, p.Name, fio.Describe(p))
	}
	return nil
}

// diskSpace checks, before anything is written, the space an explicit
// --size takes on each target (a working file of dbio's own that it will
// replace counts as free) and the space of the results. The default size
// is chosen from the free space, so it always fits.
func diskSpace(cfg fio.Config, resultsBase string) []error {
	var needs []target.Need
	if plan, err := fio.NewPlan(cfg, fio.BuiltinProfiles()); err == nil {
		needs = append(needs, target.Need{Path: resultsBase, Bytes: runner.ResultsBytes(plan.Duration()), What: "the results"})
	}
	if cfg.Size > 0 {
		for _, t := range cfg.Targets {
			needs = append(needs, target.Need{Path: t, Bytes: uint64(cfg.Size), Reclaim: target.OwnedBytes(t, "fio/work.dat"), What: "the fio working file"})
		}
	}
	return target.SpaceProblems(needs)
}

func runDisk(ctx context.Context, app *App, cfg fio.Config, f diskFlags) error {
	name := f.name
	if name == "" {
		name = "disk-" + cfg.Profile
	}
	if problems := diskSpace(cfg, f.resultsBase); len(problems) > 0 {
		return usageErrors(problems)
	}
	if _, err := fio.Check(app.Exec); err != nil {
		return err
	}
	env, done, err := runnerEnv(app)
	if err != nil {
		return err
	}
	defer done()
	out, runErr := runner.RunDisk(ctx, runner.DiskPlan{
		Name: name, Command: app.Args, Fio: runner.FioPhase{Config: cfg, Exec: app.Exec},
		RecordHost: true, CreateTargets: f.createTarget, ResultsBase: f.resultsBase,
	}, env)
	if out.Dir == "" {
		if runner.IsBadInput(runErr) {
			return &usageError{msg: runErr.Error()}
		}
		return runErr
	}
	finished := 0
	for _, p := range out.Points {
		if p.Status == results.StatusCompleted {
			finished++
		}
	}
	most := ""
	if out.Status == results.StatusCompleted && len(out.Points) < out.Planned {
		most = "at most " // rounds that ended once steady
	}
	fmt.Fprintf(app.Stdout, "%d of %s%d point(s) finished; results in %s\n", finished, most, out.Planned, out.Dir)
	if out.Status == results.StatusInterrupted {
		return fmt.Errorf("%w: %d point(s) finished and kept in %s", errInterrupted, finished, out.Dir)
	}
	if runErr != nil {
		return fmt.Errorf("%w (results so far in %s)", runErr, out.Dir)
	}
	return nil
}
