package fio

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"dbio/internal/fleet"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/units"
)

// Defaults shared by the profiles.
const (
	// DefaultRamp is the warm-up excluded from every point's figures.
	DefaultRamp = 5 * time.Second
	// DefaultLatencyMax is the line past which the SQLIO study called a disk
	// subsystem poor; a run's report reads it as results.DefaultLatencyMax.
	DefaultLatencyMax = results.DefaultLatencyMax
	// DefaultSteadyWindow is the rolling window fio judges steady state over.
	DefaultSteadyWindow = 60 * time.Second
)

// Config is one fio characterization: a profile, the targets it runs on and
// the user's overrides of the profile's choices. The zero value of every
// override means "the profile decides".
type Config struct {
	// Profile is a registered profile name.
	Profile string
	// Dialect names the tool whose command line this configuration
	// translates ("DiskSpd", "SQLIO"); "" for dbio's own flags.
	Dialect string
	// Targets are the directories measured; dbio works in <target>/dbio/fio.
	Targets []string
	// Group runs each point on all targets at once and reports the aggregate
	// (a drive group) instead of one target after the other.
	Group bool
	// Runtime is the measured length of one point (whole seconds).
	Runtime time.Duration
	// Ramp is the warm-up before each point that fio excludes from its
	// figures; nil means DefaultRamp.
	Ramp *time.Duration
	// Size is the working file per target in bytes; 0 applies DefaultSize.
	Size int64
	// IODepths are outstanding I/Os per job: a sweep for sqlio and mix, a
	// single value for the other profiles.
	IODepths []int
	// Jobs is the number of fio jobs (threads of I/O) per target.
	Jobs int
	// Engine is fio's ioengine; empty tries io_uring, then libaio, then psync.
	Engine string
	// BlockSizes in bytes (a sweep for sqlio and mix, one for curve and precondition).
	BlockSizes []int64
	// RW are fio access patterns (randread, randwrite, read, write, randrw, rw).
	RW []string
	// ReadPct is the share of reads of a mixed pattern; nil lets the profile decide.
	ReadPct *int
	// RatePcts are the curve's rates, in percent of the measured maximum.
	RatePcts []float64
	// LatencyMax and LatencyStat bound the latency-bounded table.
	LatencyMax  time.Duration
	LatencyStat results.LatencyStat
	// SteadyState is fio's steady-state criterion (e.g. "iops_slope:0.2%")
	// applied to every unthrottled point; "auto" derives it from the window.
	SteadyState  string
	SteadyWindow time.Duration
	// Buffered measures through the page cache instead of with O_DIRECT,
	// WriteThrough adds O_DSYNC to every write (the caching switches of a
	// DiskSpd or SQLIO line), and BlockAlign aligns random offsets to other
	// than the block size (DiskSpd's -r<align>). Zero values are dbio's
	// defaults: O_DIRECT, no O_DSYNC, offsets aligned to the block size.
	Buffered     bool
	WriteThrough bool
	BlockAlign   int64
	// SteadyRamp is fio's steadystate_ramp_time: how long each such point
	// runs before its first steady-state window begins.
	SteadyRamp time.Duration
	// CPUs and MemoryBytes describe the host for the profiles' thread counts
	// and the working-file size; zero reads them from the host.
	CPUs        int
	MemoryBytes uint64
	// Now is the clock for step times; nil uses time.Now.
	Now func() time.Time
	// Live shows a status line while each point runs (elapsed, time left
	// in the point and in the plan); nil shows none.
	Live *progress.Line `json:"-"`
	// After is the time the run spends after the fio pass (dbio quick's
	// workload steps): the live line's time left of the run counts it.
	After time.Duration `json:"-"`
	// SysFS is where the storage behind each target is resolved for run.json
	// (target.HostFS() from cmd); a zero SysFS leaves it unresolved, with a warning.
	SysFS target.SysFS
	// Hosts are the hosts targets may be on ("h1:/srv/data"). When the
	// targets are on hosts, each point runs on all of them at once through
	// fio's client and the hosts' fio servers, and is recorded as a fleet
	// point (fleet figures and a row per host).
	Hosts []fleet.Host
	// Precision, when set, ends each point once its figures are precise
	// and its IOPS steady; the point's runtime is then its ceiling.
	Precision *PrecisionBound
	// Prepared, when set, is called once every target is prepared (its
	// working file laid out), before the first point: a storage class's
	// caps bind from there, so that the layout, which nothing measures,
	// runs at the device's own speed.
	Prepared func() error `json:"-"`
}

// Fleet says whether the targets are on other hosts: the run is then a
// fleet run. Targets that do not parse are Validate's to report.
func (c Config) Fleet() bool {
	for _, t := range c.Targets {
		if ft, err := fleet.ParseTarget(t); err == nil && ft.Remote() {
			return true
		}
	}
	return false
}

// QuickCorners is the short four-corners pass of `dbio quick`: each corner,
// and each log-write point after them, runs for runtime after a one-second
// warm-up, on a 1 GiB working file so that laying it out takes seconds.
// That file is small enough for a controller cache to flatter a hardware
// RAID; the full `dbio disk` run is the measurement to quote. It names no
// target: the run's runner places it on the data target.
func QuickCorners(runtime time.Duration) Config {
	ramp := time.Second
	return Config{Profile: "four-corners", Runtime: runtime, Ramp: &ramp, Size: 1 << 30}
}

// Record is the configuration as run.json records it: durations as text
// ("60s"), sizes in bytes, the hosts as given.
func (c Config) Record() results.DiskConfig {
	dur := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return d.String()
	}
	r := results.DiskConfig{Profile: c.Profile, Dialect: c.Dialect, Targets: c.Targets, Group: c.Group, Runtime: dur(c.Runtime), SizeBytes: c.Size,
		IODepths: c.IODepths, Jobs: c.Jobs, Engine: c.Engine, BlockSizes: c.BlockSizes, RW: c.RW, ReadPct: c.ReadPct, RatePcts: c.RatePcts,
		LatencyMax: dur(c.LatencyMax), LatencyStat: c.LatencyStat, SteadyState: c.SteadyState, SteadyWindow: dur(c.SteadyWindow),
		SteadyRamp: dur(c.SteadyRamp), Buffered: c.Buffered, WriteThrough: c.WriteThrough, BlockAlign: c.BlockAlign,
		CPUs: c.CPUs, MemoryBytes: c.MemoryBytes}
	if c.Ramp != nil {
		r.Ramp = c.Ramp.String()
	}
	if p := c.Precision; p != nil {
		r.Precision, r.PrecisionMinS = p.Precision.String(), p.Min.Seconds()
	}
	for _, h := range c.Hosts {
		r.Hosts = append(r.Hosts, results.HostConfig(h))
	}
	return r
}

// Plan is a configuration expanded into the points it will run, in order.
type Plan struct {
	Profile Profile
	Config  Config
	Points  []results.FioPlan
}

// Duration estimates the plan's length: runtimes and ramps (steady-state
// points count their cap, whole-file passes are not counted).
func (p Plan) Duration() time.Duration {
	var d time.Duration
	for _, pt := range p.Points {
		d += time.Duration(pt.RuntimeS+pt.RampS) * time.Second
	}
	return d
}

// Validate checks c against the registry and returns every problem at once,
// each naming the setting and the accepted form.
func (c Config) Validate(reg *Registry) []error {
	_, errs := c.plan(reg)
	return errs
}

// NewPlan validates c and expands it into points.
func NewPlan(c Config, reg *Registry) (Plan, error) {
	p, errs := c.plan(reg)
	if len(errs) > 0 {
		return Plan{}, errors.Join(errs...)
	}
	return p, nil
}

var knownRW = map[string]bool{"read": true, "write": true, "randread": true, "randwrite": true, "rw": true, "randrw": true}

// Mixed reports whether an access pattern reads and writes.
func Mixed(rw string) bool { return rw == "rw" || rw == "randrw" }

func (c Config) plan(reg *Registry) (Plan, []error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	prof, err := reg.Lookup(c.Profile)
	if err != nil {
		errs = append(errs, err)
	}
	if len(c.Targets) == 0 {
		bad("no target: pass --target DIR (repeat it to compare several)")
	}
	seen := map[string]bool{}
	for _, t := range c.Targets {
		if clean := filepath.Clean(t); seen[clean] {
			bad("--target %s is given twice: pass each target once", t)
		} else {
			seen[clean] = true
		}
	}
	if c.Group && len(c.Targets) < 2 && !c.Fleet() {
		bad("--group needs at least two targets: pass --target once per drive of the group")
	}
	errs = append(errs, c.fleetProblems(prof)...)
	if c.Runtime < 0 || c.Runtime%time.Second != 0 {
		bad("--runtime %s: fio runs whole seconds; use e.g. 30s or 2m", c.Runtime)
	}
	if c.Ramp != nil && (*c.Ramp < 0 || *c.Ramp%time.Second != 0) {
		bad("--ramp-time %s: use whole seconds, e.g. 5s (0 for none)", *c.Ramp)
	}
	if c.Size != 0 && c.Size < 1<<20 {
		bad("--size %d: the working file must be at least 1MiB; use e.g. --size 4G", c.Size)
	}
	for _, d := range c.IODepths {
		if d < 1 || d > 4096 {
			bad("--iodepth %d: use a queue depth from 1 to 4096", d)
		}
	}
	if c.Jobs < 0 || c.Jobs > 1024 {
		bad("--jobs %d: use 1 to 1024 fio jobs", c.Jobs)
	}
	for _, bs := range c.BlockSizes {
		if bs < 512 || bs%512 != 0 {
			bad("--bs %s: direct I/O needs block sizes that are multiples of 512 bytes, e.g. 4k", units.FormatBytes(uint64(max(bs, 0))))
		}
	}
	for _, rw := range c.RW {
		if !knownRW[rw] {
			bad("--rw %q: use randread, randwrite, read, write, randrw or rw", rw)
		}
	}
	if c.ReadPct != nil && (*c.ReadPct < 0 || *c.ReadPct > 100) {
		bad("--read-pct %d: use a percentage from 0 to 100", *c.ReadPct)
	}
	for _, r := range c.RatePcts {
		if r <= 0 || r > 1000 {
			bad("--rates %g: use percentages of the measured maximum above 0, e.g. 10,50,100,120", r)
		}
	}
	if c.LatencyMax < 0 {
		bad("--latency-max %s: use a positive duration, e.g. 20ms", c.LatencyMax)
	}
	if c.LatencyStat != "" {
		if _, err := c.LatencyStat.Percentile(); err != nil {
			errs = append(errs, fmt.Errorf("--latency-stat %w", err))
		}
	}
	if c.SteadyWindow < 0 || c.SteadyWindow%time.Second != 0 {
		bad("--ss-window %s: use whole seconds, e.g. 60s", c.SteadyWindow)
	}
	if c.SteadyRamp < 0 || c.SteadyRamp%time.Second != 0 {
		bad("--ss-ramp %s: use whole seconds, e.g. 30s (0 for none)", c.SteadyRamp)
	}
	_, own := prof.(steadyProfile)
	_, rounds := prof.(rounder)
	if prof != nil && !own && !rounds && c.SteadyState == "" {
		for _, f := range []struct {
			flag string
			set  bool
		}{{"ss-window", c.SteadyWindow > 0}, {"ss-ramp", c.SteadyRamp > 0}} {
			if f.set {
				bad("--%s applies with --steady-state (or a profile that runs until steady state): add --steady-state or drop --%s", f.flag, f.flag)
			}
		}
	}
	if !rounds && c.SteadyState != "" && c.SteadyState != "auto" && !steadyCriterion.MatchString(c.SteadyState) {
		bad("--steady-state %q: use fio's form iops_slope:0.2%%, iops:10%%, bw_slope:1%% or bw:5%%", c.SteadyState)
	}
	if c.Engine != "" && !slices.Contains(IOEngines(), c.Engine) {
		hint := ""
		switch c.Engine {
		case "sqlite", "postgres", "mariadb", "mysql":
			hint = fmt.Sprintf(" (%s is a database engine: dbio disk measures the storage with fio alone; run the database with dbio tpcc --engine %s)", c.Engine, c.Engine)
		}
		bad("--ioengine %q: not an fio ioengine dbio measures storage with: use one of %s%s", c.Engine, strings.Join(IOEngines(), ", "), hint)
	}
	if c.BlockAlign != 0 && (c.BlockAlign < 512 || c.BlockAlign%512 != 0) {
		bad("block alignment %d: direct I/O needs multiples of 512 bytes", c.BlockAlign)
	}
	if c.Precision != nil && prof != nil {
		for _, p := range c.Precision.problems(c, prof) {
			errs = append(errs, errors.New(p))
		}
	}
	if len(errs) > 0 || prof == nil {
		return Plan{}, errs
	}
	c = c.withHost()
	if sizer, ok := prof.(DefaultSizer); ok && c.Size == 0 {
		c.Size = sizer.DefaultSize()
	}
	points, err := prof.Points(c)
	if err != nil {
		return Plan{}, []error{err}
	}
	for i := range points {
		c.applySteady(&points[i])
		// The caching switches add to a point's own: a log-write point is
		// written through whatever the command line says.
		points[i].Buffered = points[i].Buffered || c.Buffered
		points[i].WriteThrough = points[i].WriteThrough || c.WriteThrough
		switch p := points[i]; {
		case c.Precision == nil:
		case p.Loops > 0:
			errs = append(errs, fmt.Errorf("--precision: point %s makes %d pass(es) over the file, which have no runtime to bound; run the %s profile without --precision", p.Name, p.Loops, prof.Name()))
		case p.SteadyState != "":
			errs = append(errs, fmt.Errorf("--precision: point %s runs until fio's steady state (%s); run the %s profile without --precision", p.Name, p.SteadyState, prof.Name()))
		}
	}
	if len(errs) > 0 {
		return Plan{}, errs
	}
	plan := Plan{Profile: prof, Config: c}
	if c.Fleet() {
		for _, p := range points {
			plan.Points = append(plan.Points, placed(p, "fleet", c.Targets))
		}
		return plan, nil
	}
	if c.Group {
		for _, p := range points {
			plan.Points = append(plan.Points, placed(p, "group", c.Targets))
		}
		return plan, nil
	}
	labels := TargetLabels(c.Targets)
	for ti, t := range c.Targets {
		for _, p := range points {
			if len(c.Targets) > 1 {
				p.Name = labels[ti] + "-" + p.Name
				if p.RateOf != "" {
					p.RateOf = labels[ti] + "-" + p.RateOf
				}
			}
			plan.Points = append(plan.Points, placed(p, labels[ti], []string{t}))
		}
	}
	return plan, nil
}

// placed is p on its target(s), labelled.
func placed(p results.FioPlan, label string, targets []string) results.FioPlan {
	p.Label, p.Targets = label, targets
	return p
}

var steadyCriterion = regexp.MustCompile(`^(iops|bw)(_slope)?:[0-9]+(\.[0-9]+)?%?$`)

// IOEngines are the fio ioengines that read and write a file on the target
// (fio 3.33's synchronous, vectored and asynchronous ones, and mmap): an
// engine outside them measures something else (a network, the CPU, nothing).
func IOEngines() []string {
	return []string{"io_uring", "libaio", "posixaio", "psync", "sync", "vsync", "pvsync", "pvsync2", "mmap"}
}

// withHost fills in the host's CPUs and memory where the caller left them out.
func (c Config) withHost() Config {
	if c.CPUs == 0 {
		c.CPUs = runtime.NumCPU()
	}
	if c.MemoryBytes == 0 {
		c.MemoryBytes = hostMemory()
	}
	return c
}

// ramp is the warm-up in whole seconds.
func (c Config) ramp() int {
	if c.Ramp == nil {
		return int(DefaultRamp / time.Second)
	}
	return int(*c.Ramp / time.Second)
}

// runtime is the point length in whole seconds, the profile's when not set.
func (c Config) runtime(p Profile) int {
	if c.Runtime > 0 {
		return int(c.Runtime / time.Second)
	}
	return int(p.DefaultRuntime() / time.Second)
}

// steadyProfile marks profiles that run until steady state by themselves,
// so that --ss-window and --ss-ramp apply without --steady-state.
type steadyProfile interface{ untilSteady() }

// steadyRamp is fio's steadystate_ramp_time in whole seconds.
func (c Config) steadyRamp() int { return int(c.SteadyRamp / time.Second) }

func (c Config) steadyWindow() int {
	if c.SteadyWindow > 0 {
		return int(c.SteadyWindow / time.Second)
	}
	return int(DefaultSteadyWindow / time.Second)
}

// steadyCriterionFor turns "auto" into fio's slope criterion: the best-fit
// line over the window may drift at most 10 % of the mean from one end of
// the window to the other, the slope rule of SNIA's solid-state performance
// test specification.
func steadyCriterionFor(setting string, windowS int) string {
	if setting != "auto" {
		return setting
	}
	return fmt.Sprintf("iops_slope:%s%%", trimFloat(10/float64(windowS)))
}

// applySteady adds the --steady-state criterion to unthrottled, time-based
// points: a rate-limited point is flat by construction, and a round is
// judged by dbio across rounds, not by fio within it.
func (c Config) applySteady(p *results.FioPlan) {
	if c.SteadyState == "" || p.SteadyState != "" || p.RateOf != "" || p.Loops > 0 || p.Round > 0 {
		return
	}
	p.SteadyWindowS, p.SteadyRampS = c.steadyWindow(), c.steadyRamp()
	p.SteadyState = steadyCriterionFor(c.SteadyState, p.SteadyWindowS)
}

// TargetLabels names each target for point names and tables: the last path
// element ("/mnt/nvme" → "nvme"), numbered when two would read the same.
func TargetLabels(targets []string) []string {
	labels := make([]string, len(targets))
	count := map[string]int{}
	for i, t := range targets {
		base := strings.Trim(unsafeLabel.ReplaceAllString(filepath.Base(filepath.Clean(t)), "-"), "-")
		switch base {
		case "":
			base = "target"
		case "global":
			base = "target-global" // [global] is fio's own section
		}
		labels[i] = base
		count[base]++
	}
	for i, l := range labels {
		if count[l] > 1 {
			labels[i] = fmt.Sprintf("%s%d", l, i+1)
		}
	}
	return labels
}

var unsafeLabel = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// trimFloat renders a percentage or rate without trailing zeros: 10, 0.167.
func trimFloat(v float64) string { return fmt.Sprintf("%.3g", v) }

// fleetProblems checks the targets against the hosts, and what a fleet
// cannot do.
func (c Config) fleetProblems(prof Profile) []error {
	targets, errs := fleet.Resolve(c.Hosts, c.Targets)
	if len(errs) > 0 || !c.Fleet() {
		return errs
	}
	for _, t := range targets {
		if !t.Remote() {
			errs = append(errs, fmt.Errorf("target %s is on this machine while the others are on hosts: a fleet runs every target through a fio server; name this machine as a host too (e.g. --host me=localhost) and write the target as me:%s", t, t.Path))
		}
	}
	// fio judges steady state on each host apart, and each would stop at
	// its own; a profile of rounds judges the fleet's rounds itself.
	if _, rounds := prof.(rounder); c.SteadyState != "" && !rounds {
		errs = append(errs, errors.New("--steady-state: each host would stop at its own steady state, leaving no common window; run the fleet for a fixed --runtime"))
	}
	if _, ok := prof.(steadyProfile); ok {
		errs = append(errs, fmt.Errorf("profile %s runs until steady state, and each host would stop at its own, leaving no common window: precondition each host's target with dbio disk on that host", prof.Name()))
	}
	return errs
}
