package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/dialect"
	"dbio/internal/fio"
	"dbio/internal/fleet"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/steady"
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
	// precision and precisionMin end each point once its figures are
	// precise (see fio.PrecisionBound).
	precision    string
	precisionMin time.Duration
	resultsBase  string
	name         string
	dryRun       bool
	// createTarget makes missing targets instead of refusing them.
	createTarget bool
	// diskspd and sqlio are a DiskSpd or SQLIO command line to run as one fio job.
	diskspd, sqlio string
	// hosts name the hosts targets may be on (NAME=DEST); fioPort and
	// fioServer say where and whose their fio servers are.
	hosts     []string
	sshConfig string
	fioPort   int
	fioServer string
	// exporterPort is the port of the hosts' node exporters; 0 reads none.
	exporterPort int
	// repeat runs the whole characterization this many times into one repeat set.
	repeat int
	// gates are --threshold and --junit.
	gates gateFlags
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
  dbio disk --target /mnt/nvme --profile precondition
  dbio disk --target /mnt/nvme --profile crystaldiskmark
  dbio disk --target /mnt/nvme --diskspd "-b8K -o8 -t4 -r -w30 -d60 -W5 -Sh -L" --dry-run
  dbio disk --target /mnt/nvme --sqlio "-kW -s60 -frandom -o8 -t4 -b8 -LS -BH"
  dbio disk --host h1=admin@10.0.0.11 --host h2=admin@10.0.0.12 --target h1:/srv/data --target h2:/srv/data --size 8G`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.repeat < 1 {
				return usagef("--repeat %d: run at least once (--repeat 5 runs five times)", f.repeat)
			}
			g, err := f.gates.resolve(app)
			if err != nil {
				return err
			}
			cfg, tr, err := diskConfig(cmd, f, app)
			if err != nil {
				return err
			}
			if tr != nil {
				printTranslation(app, *tr)
			}
			if f.dryRun {
				return diskDryRun(app, cfg, tr != nil, f.repeat)
			}
			return runDisk(cmd.Context(), app, cfg, f, tr, g)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVarP(&f.targets, "target", "t", nil, "directory on the storage to measure (repeat to compare several side by side)")
	fs.StringVarP(&f.profile, "profile", "p", "four-corners", "fio profile: "+strings.Join(fio.BuiltinProfiles().Names(), ", "))
	fs.BoolVar(&f.group, "group", false, "run each point on all targets at once and report the aggregate (a drive group)")
	fs.DurationVar(&f.runtime, "runtime", 0, "measured time of each point (default: the profile's: 1m, 5s for crystaldiskmark, a 30m cap for precondition)")
	fs.DurationVar(&f.ramp, "ramp-time", fio.DefaultRamp, "warm-up before each point, excluded from its figures")
	alias(fs, "ramp", "ramp-time")
	fs.StringVar(&f.size, "size", "", "working file per target, e.g. 8G (default: see above)")
	fs.StringSliceVar(&f.iodepth, "iodepth", nil, "I/Os in flight per job; a list for sqlio and mix (e.g. 1,8,32,64)")
	fs.IntVar(&f.jobs, "jobs", 0, "fio jobs (I/O threads) per target (default: the profile's)")
	fs.StringVar(&f.engine, "ioengine", "", "fio ioengine (default io_uring, falling back to libaio, then psync)")
	// --engine names the database everywhere else; here it was fio's
	// ioengine, and still works as such for a while (a database name
	// given to it is refused by the ioengine check, with the command that
	// runs that database).
	alias(fs, "engine", "ioengine")
	fs.StringSliceVar(&f.bs, "bs", nil, "block sizes, e.g. 4k,8k,64k (sqlio, mix: a list; curve, precondition: one)")
	fs.StringSliceVar(&f.rw, "rw", nil, "access patterns: randread, randwrite, read, write, randrw, rw")
	fs.IntVar(&f.readPct, "read-pct", 70, "share of reads in a mix, in percent (mix, curve and job with randrw or rw)")
	fs.StringSliceVar(&f.rates, "rates", nil, "curve rates in percent of the measured maximum (default 10,20,...,120)")
	fs.DurationVar(&f.latencyMax, "latency-max", 0, "latency bound of the best-within table (default 20ms; sqlio always shows it)")
	fs.StringVar(&f.latencyStat, "latency-stat", "", "statistic the bound applies to: mean (default), p50, p95, p99, p99.9")
	fs.StringVar(&f.steadyState, "steady-state", "", "end each unthrottled point at fio's steady state, e.g. iops_slope:0.2% (alone: 10% drift over the window)")
	fs.Lookup("steady-state").NoOptDefVal = "auto"
	fs.DurationVar(&f.ssWindow, "ss-window", fio.DefaultSteadyWindow, "window fio judges steady state over (fio's steadystate_duration)")
	fs.DurationVar(&f.ssRamp, "ss-ramp", 0, "time each point runs before fio starts judging steady state (fio's steadystate_ramp_time)")
	fs.StringVar(&f.precision, "precision", "", "end each point once its figures' 95% intervals are within ±P% and its IOPS steady, the runtime its ceiling: 2% (IOPS), or FIGURE:P% for iops, mb_s, lat_mean_us or pQ (e.g. iops:2%,p99:10%)")
	fs.DurationVar(&f.precisionMin, "precision-min", fio.DefaultPrecisionMin, "the shortest measurement --precision allows, whatever its intervals say")
	fs.StringVar(&f.resultsBase, "results", "results", "directory the results directory is created in")
	fs.StringVar(&f.name, "name", "", "name of the results directory (default disk-<profile>)")
	fs.BoolVarP(&f.dryRun, "dry-run", "n", false, "print the points and their estimated time, touch nothing")
	fs.StringVar(&f.diskspd, "diskspd", "", "run a DiskSpd command line as one fio job, e.g. \"-b8K -o8 -t4 -r -w30 -d60 -W5 -Sh -L\" (see docs/disk.md)")
	fs.StringVar(&f.sqlio, "sqlio", "", "run an SQLIO command line as one fio job, e.g. \"-kW -s60 -frandom -o8 -t4 -b8 -LS -BH\" (the sqlio profile is SQLIO's field matrix instead)")
	fs.StringArrayVar(&f.hosts, "host", nil, "a host targets may be on, NAME=[user@]ADDRESS or an ssh_config alias (repeat per host); then --target NAME:/path runs there, through fio's client and the host's fio server (see docs/fleet.md)")
	fs.StringVar(&f.sshConfig, "ssh-config", "", "ssh_config file for reaching the hosts (ssh -F); default: your own ssh configuration, keys and agent")
	fs.IntVar(&f.fioPort, "fio-port", fleet.DefaultFioPort, "port of the hosts' fio servers")
	fs.IntVar(&f.exporterPort, "node-exporter-port", fleet.DefaultNodeExporterPort, "port of the hosts' Prometheus node exporters, read once a second for their CPU and disks (0: read none)")
	fs.StringVar(&f.fioServer, "fio-server", fleet.ServerStart, "the hosts' fio servers: start (dbio starts them over ssh for the run and stops them after) or running (you run them)")
	bindRepeat(cmd, &f.repeat)
	f.gates.register(fs)
	fs.BoolVar(&f.createTarget, "create-target", false, "create each --target that does not exist; without it a missing target is refused, so that a typo or an unmounted mount point never benchmarks the disk underneath")
	groupOwnFlags(cmd, "fio points", "profile", "bs", "rw", "read-pct", "iodepth", "jobs", "size", "ioengine", "rates", "group", "diskspd", "sqlio")
	groupOwnFlags(cmd, "Steady state", "steady-state", "ss-window", "ss-ramp", "precision", "precision-min")
	groupOwnFlags(cmd, "Best within a latency bound", "latency-max", "latency-stat")
	groupFlagsInHelp(cmd, "")
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

// jobFlags are the flags a DiskSpd or SQLIO line sets itself.
var jobFlags = []string{"profile", "runtime", "ramp-time", "size", "iodepth", "jobs", "bs", "rw", "read-pct", "rates",
	"latency-max", "latency-stat", "steady-state", "ss-window"}

// translated reads --diskspd or --sqlio into the job's configuration.
func translated(cmd *cobra.Command, f diskFlags) (*dialect.Translation, []error) {
	if f.diskspd == "" && f.sqlio == "" {
		return nil, nil
	}
	if f.diskspd != "" && f.sqlio != "" {
		return nil, []error{errors.New("--diskspd and --sqlio: give one command line")}
	}
	option := "--diskspd"
	if f.sqlio != "" {
		option = "--sqlio"
	}
	var errs []error
	for _, name := range jobFlags {
		if cmd.Flags().Changed(name) {
			errs = append(errs, fmt.Errorf("--%s: the %s line sets the job; change the line instead", name, option))
		}
	}
	var tr dialect.Translation
	var err error
	if f.diskspd != "" {
		tr, err = dialect.DiskSpd(f.diskspd)
	} else {
		tr, err = dialect.SQLIO(f.sqlio, os.ReadFile)
	}
	if err != nil {
		// Every bad switch, one per line.
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = append(errs, j.Unwrap()...)
		} else {
			errs = append(errs, err)
		}
	}
	return &tr, errs
}

// diskConfig turns the flags into a validated configuration, reporting every
// bad flag at once as a usage error; a DiskSpd or SQLIO line comes back
// with its translation.
func diskConfig(cmd *cobra.Command, f diskFlags, app *App) (fio.Config, *dialect.Translation, error) {
	changed := cmd.Flags().Changed
	tr, errs := translated(cmd, f)
	if tr != nil {
		cfg := tr.Config
		cfg.Targets, cfg.Group, cfg.Engine, cfg.Now, cfg.SysFS = f.targets, f.group, f.engine, app.Now, app.SysFS
		hosts, herrs := diskHosts(cmd, f)
		cfg.Hosts, errs = hosts, append(errs, herrs...)
		prec, perrs := diskPrecision(cmd, f)
		cfg.Precision, errs = prec, append(errs, perrs...)
		if len(errs) == 0 {
			errs = append(errs, cfg.Validate(fio.BuiltinProfiles())...)
		}
		errs = append(errs, diskPlaces(f, app)...)
		if len(errs) > 0 {
			return cfg, nil, usageErrors(errs)
		}
		return cfg, tr, nil
	}
	hosts, herrs := diskHosts(cmd, f)
	errs = append(errs, herrs...)
	cfg := fio.Config{
		Profile: f.profile, Targets: f.targets, Group: f.group, Runtime: f.runtime, Jobs: f.jobs,
		Engine: f.engine, RW: f.rw, LatencyMax: f.latencyMax, LatencyStat: results.LatencyStat(f.latencyStat),
		SteadyState: f.steadyState, Now: app.Now, SysFS: app.SysFS, Hosts: hosts,
	}
	prec, perrs := diskPrecision(cmd, f)
	cfg.Precision, errs = prec, append(errs, perrs...)
	if changed("ramp-time") {
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
	errs = append(errs, diskPlaces(f, app)...)
	if len(errs) > 0 {
		return cfg, nil, usageErrors(errs)
	}
	return cfg, nil, nil
}

// diskPrecision reads --precision and --precision-min; which figures a
// point records, and the bound against the points' runtime, the fio
// configuration's validation checks.
func diskPrecision(cmd *cobra.Command, f diskFlags) (*fio.PrecisionBound, []error) {
	if f.precision == "" {
		if cmd.Flags().Changed("precision-min") {
			return nil, []error{errors.New("--precision-min: applies only with --precision: add --precision 2% (say) or drop --precision-min")}
		}
		return nil, nil
	}
	var errs []error
	p, err := steady.ParsePrecision(f.precision)
	if err != nil {
		errs = append(errs, fmt.Errorf("--precision: %w; a fio point's figures are %s, or pQ for a percentile (e.g. iops:2%%,p99:10%%)", err, strings.Join(fio.PrecisionFigureNames, ", ")))
	}
	if f.precisionMin < fio.MinPrecisionMin || f.precisionMin%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--precision-min %s: use whole seconds, at least %s (e.g. 30s), so that the interval has ten batches of a second or more", f.precisionMin, fio.MinPrecisionMin))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &fio.PrecisionBound{Precision: p, Min: f.precisionMin}, nil
}

// diskPlaces checks the targets and the results directory; a dry run
// touches nothing and may plan for targets not mounted yet.
func diskPlaces(f diskFlags, app *App) []error {
	if f.dryRun {
		return nil
	}
	var errs []error
	for _, t := range f.targets {
		if ft, err := fleet.ParseTarget(t); err != nil || ft.Remote() {
			continue // the configuration's check reports it, or the host's run checks it there
		}
		errs = append(errs, runner.Places{Data: t, Create: f.createTarget, Subdirs: []string{fio.WorkSubdir}}.Problems(app.SysFS)...)
	}
	return append(errs, runner.Places{Results: f.resultsBase}.Problems(app.SysFS)...)
}

// printTranslation says what each switch of a DiskSpd or SQLIO line became.
func printTranslation(app *App, tr dialect.Translation) {
	fmt.Fprintf(app.Stdout, "%s %s\n  as fio: %s\n", tr.Tool, strings.TrimSpace(tr.Line), tr.Summary())
	w, m := 0, 0
	for _, s := range tr.Switches {
		w, m = max(w, len(s.Given)), max(m, len(s.Means))
	}
	for _, s := range tr.Switches {
		fmt.Fprintf(app.Stdout, "  %-*s  %-*s  %s\n", w, s.Given, m, s.Means, s.Fio)
	}
	for _, n := range tr.Notes {
		fmt.Fprintf(app.Stdout, "  note: %s\n", n)
	}
}

func diskDryRun(app *App, cfg fio.Config, jobFiles bool, repeat int) error {
	plan, err := fio.NewPlan(cfg, fio.BuiltinProfiles())
	if err != nil {
		return usagef("%v", err)
	}
	var layout time.Duration
	var files []string
	for _, t := range cfg.Targets {
		if ft, err := fleet.ParseTarget(t); err != nil || ft.Remote() {
			continue // a host's file is sized on the host
		}
		l, err := fio.EstimateLayout(cfg.SysFS, t, cfg.Size, cfg.MemoryBytes)
		if err != nil {
			return usagef("%v", err)
		}
		layout += l.Time()
		files = append(files, layoutLine(l))
	}
	// The runner's one estimator, as every dry run's: the points' time
	// and the layout's.
	once := runner.ExpectDisk(runner.DiskPlan{Fio: runner.FioPhase{Config: cfg}}, layout, 1)
	fioTime := once.Ceiling() - layout
	fmt.Fprintf(app.Stdout, "profile %s: %d point(s), about %s of fio time", plan.Profile.Name(), len(plan.Points), fioTime)
	if layout > 0 {
		fmt.Fprintf(app.Stdout, ", plus about %s laying out: about %s in all", layout, once.Ceiling())
	}
	fmt.Fprintln(app.Stdout)
	if cfg.Precision != nil {
		for _, part := range once.Parts {
			if part.What == "device pass" {
				fmt.Fprintf(app.Stdout, "%s: typically %s, at most %s: %s\n", part.What, part.Typical, part.Ceiling, part.How)
			}
		}
	}
	for _, f := range files {
		fmt.Fprintln(app.Stdout, f)
	}
	if repeat > 1 {
		all := runner.ExpectDisk(runner.DiskPlan{Fio: runner.FioPhase{Config: cfg}}, 0, repeat)
		fmt.Fprintf(app.Stdout, "repeated %d times into one repeat set: about %s of fio time in all\n", repeat, all.Ceiling())
	}
	for i, p := range plan.Points {
		fmt.Fprintf(app.Stdout, "%3d  %-28s %s\n", i, p.Name, fio.Describe(p))
	}
	if jobFiles {
		for i, p := range plan.Points {
			fmt.Fprintf(app.Stdout, "\nfio job file of point %d (%s), as the run writes it into job.fio; the ioengine falls back and O_DIRECT\n"+
				"gives way to buffered I/O where the target refuses them:\n\n%s", i, p.Name, fio.PreviewJobFile(plan, i))
		}
	}
	return nil
}

// layoutLine says what a target's working file will be and cost.
func layoutLine(l fio.Layout) string {
	s := fmt.Sprintf("  %s: %s", l.Target, l.Why)
	if l.Reused {
		return s + "; already laid out by dbio, reused"
	}
	return s + fmt.Sprintf("; laying it out: about %s at %.0f MB/s (%s's sequential writes; the run shows the real rate)", l.Time(), l.AssumedMBPerSec, l.Kind)
}

// diskSpace checks, before anything is written, the space an explicit
// --size takes on each target (a working file of dbio's own that it will
// replace counts as free) and the space of the results. The default size
// is chosen from the free space, so it always fits.
func diskSpace(cfg fio.Config, resultsBase string, repeat int) []error {
	var needs []target.Need
	if plan, err := fio.NewPlan(cfg, fio.BuiltinProfiles()); err == nil {
		needs = append(needs, target.Need{Path: resultsBase, Bytes: runner.ResultsBytes(time.Duration(repeat) * plan.Duration()), What: "the results"})
	}
	if cfg.Size > 0 {
		for _, t := range cfg.Targets {
			if ft, err := fleet.ParseTarget(t); err != nil || ft.Remote() {
				continue
			}
			needs = append(needs, target.Need{Path: t, Bytes: uint64(cfg.Size), Reclaim: target.OwnedBytes(t, "fio/work.dat"), What: "the fio working file"})
		}
	}
	return target.SpaceProblems(needs)
}

func runDisk(ctx context.Context, app *App, cfg fio.Config, f diskFlags, tr *dialect.Translation, g gates) error {
	name := f.name
	var notes []string
	switch {
	case name != "":
	case tr != nil:
		name = "disk-" + strings.ToLower(tr.Tool)
	default:
		name = "disk-" + cfg.Profile
	}
	if tr != nil {
		notes = append(notes, fmt.Sprintf("%s line %q run as one fio job: %s", tr.Tool, strings.TrimSpace(tr.Line), tr.Summary()))
		notes = append(notes, tr.Notes...)
	}
	if problems := diskSpace(cfg, f.resultsBase, f.repeat); len(problems) > 0 {
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
	env.StepThresholds = g.stepThresholds()
	plan := runner.DiskPlan{
		Name: name, Command: app.Args, Fio: runner.FioPhase{Config: cfg, Exec: app.Exec}, Notes: notes,
		RecordHost: true, CreateTargets: f.createTarget, ResultsBase: f.resultsBase,
	}
	if f.repeat > 1 {
		// Every repeat measures the same plan: nothing a repeat measured
		// feeds the next one's (a curve's rates come from its own maximum).
		out, runErr := runner.RunRepeated(ctx, runner.Repeats{N: f.repeat, Disk: func(int) (runner.DiskPlan, error) { return plan, nil }}, env)
		return repeatsDone(app, out, runErr, g)
	}
	out, runErr := runner.RunDisk(ctx, plan, env)
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
	if tr != nil && finished > 0 {
		printDiskSpdLadder(app, out.Dir)
	}
	fmt.Fprintf(app.Stdout, "%d of %s%d point(s) finished; results in %s\n", finished, most, out.Planned, out.Dir)
	// A single run gets its report as every command's run does (and as
	// each repeat of a repeat set does), interrupted or not.
	judged := g.judge(app, out.Dir)
	writeRunReport(app, out.Dir)
	gateErr := g.verdict(app, judged)
	if out.Status == results.StatusInterrupted {
		return fmt.Errorf("%w: %d point(s) finished and kept in %s", errInterrupted, finished, out.Dir)
	}
	if runErr != nil {
		return fmt.Errorf("%w (results so far in %s)", runErr, out.Dir)
	}
	return gateErr
}

// printDiskSpdLadder prints the latency table DiskSpd prints under -L, for
// a DiskSpd line, read back from the run's results directory.
func printDiskSpdLadder(app *App, dir string) {
	l, err := results.Load(dir)
	if err == nil {
		err = report.DiskSpdText(app.Stdout, l)
	}
	if err != nil {
		fmt.Fprintf(app.Stdout, "warning: DiskSpd's latency table not printed: %v\n", err)
	}
}

// diskHosts reads --host, each with the fio server settings.
func diskHosts(cmd *cobra.Command, f diskFlags) ([]fleet.Host, []error) {
	var hosts []fleet.Host
	var errs []error
	for _, s := range f.hosts {
		h, err := fleet.ParseHostFlag(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h.FioPort, h.FioServer, h.SSHConfig = f.fioPort, f.fioServer, f.sshConfig
		switch {
		case f.exporterPort == 0:
			h.NodeExporter = fleet.NodeExporterOff
		case f.exporterPort != fleet.DefaultNodeExporterPort:
			h.NodeExporter = fmt.Sprintf(":%d", f.exporterPort)
		}
		hosts = append(hosts, h)
	}
	if len(f.hosts) == 0 {
		for _, name := range []string{"fio-port", "fio-server", "ssh-config", "node-exporter-port"} {
			if cmd.Flags().Changed(name) {
				errs = append(errs, fmt.Errorf("--%s: it sets the hosts' fio servers, and no --host is given", name))
			}
		}
	}
	errs = append(errs, sshConfigFlagProblems(f.sshConfig)...)
	if f.fioServer != fleet.ServerStart && f.fioServer != fleet.ServerRunning {
		errs = append(errs, fmt.Errorf("--fio-server %q: use %s (dbio starts them for the run) or %s (you run them)", f.fioServer, fleet.ServerStart, fleet.ServerRunning))
	} else if f.fioPort < 1 || f.fioPort > 65535 {
		errs = append(errs, fmt.Errorf("--fio-port %d: give a port from 1 to 65535", f.fioPort))
	}
	if f.exporterPort < 0 || f.exporterPort > 65535 {
		errs = append(errs, fmt.Errorf("--node-exporter-port %d: give a port from 1 to 65535, or 0 to read no node exporter", f.exporterPort))
	}
	return hosts, errs
}
