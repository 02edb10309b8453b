package suite

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"dbio/internal/engine"
	"dbio/internal/fleet"
	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/secret"
	"dbio/internal/steady"
	"dbio/internal/units"
	"dbio/internal/workload"
)

// Plan is a validated suite, expanded into runs in the order they execute.
type Plan struct {
	Name        string
	Description string
	Results     string
	Runs        []Run
	// Hosts are the suite's [[host]] tables: where targets on hosts are.
	Hosts []fleet.Host `json:",omitempty"`
	// Notices name the old keys the file uses and their new names; the
	// caller shows them.
	Notices []string `json:"-"`
	// Expect are the findings the runs should reproduce, checked against
	// the results once the suite has run.
	Expect []results.Expectation
	// Thresholds are the [[threshold]] bounds each run is judged by once it ends.
	Thresholds []RunThreshold `json:",omitempty"`
}

// Target is a resolved target of a run.
type Target struct {
	Name string `json:"name"`
	// Path is the directory, on this machine or on a host ("h1:/srv/data");
	// empty for a target spread over hosts (Paths).
	Path string `json:"path"`
	// Paths are the directories of a target spread over hosts, which a disk
	// run measures at once as a fleet.
	Paths  []string       `json:"paths,omitempty"`
	Limits iolimit.Limits `json:"limits"`
}

// Run is one fully resolved run.
type Run struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	// Base is the name every repetition of the run shares ("tpcc-nvme" for
	// tpcc-nvme-r1 and tpcc-nvme-r2): what an expectation names.
	Base string `json:"base"`
	// Variant names the crossed values this run takes, e.g. data=nvme buffer_pool=64MB.
	Variant map[string]string `json:"variant,omitempty"`
	// Rep numbers the repetitions of a variant (1-based) when the run repeats.
	Rep int `json:"rep,omitempty"`
	// UntilDecided says the run's two variants are compared after each
	// round of repeats, and no more rounds run once a sequential test has
	// decided (its Rep-th round being at most the Repeat-th); MarginPct is
	// the difference either way under which they count as not different.
	UntilDecided bool    `json:"until_decided,omitempty"`
	MarginPct    float64 `json:"margin_pct,omitempty"`

	Kind     string `json:"kind"` // tpcc, sysbench, as3ap, disk
	Scenario string `json:"scenario,omitempty"`
	// Capture records the block I/O under the run's targets during its
	// user steps (--capture).
	Capture bool `json:"capture,omitempty"`
	// Driver is where a database run whose data target is on hosts runs
	// its users: DriverHost or DriverCoordinator; empty for a run of this
	// machine and for a disk run.
	Driver string `json:"driver,omitempty"`

	Engine     string `json:"engine,omitempty"`
	BufferPool int64  `json:"buffer_pool_bytes,omitempty"`
	// ServerMemory caps the managed server's whole memory, page cache included.
	ServerMemory int64             `json:"server_memory_bytes,omitempty"`
	Settings     map[string]string `json:"settings,omitempty"`
	DSN          secret.DSN        `json:"dsn,omitempty"` // recorded without its password
	Transport    string            `json:"transport,omitempty"`

	Data   Target  `json:"data"`
	Log    *Target `json:"log,omitempty"`
	Backup *Target `json:"backup,omitempty"`

	Workload WorkloadDef   `json:"workload"`
	Users    []int         `json:"users,omitempty"`
	RampUp   time.Duration `json:"rampup,omitempty"`
	Step     time.Duration `json:"step,omitempty"`
	// RampUpUntil, when set, ends each ramp-up once throughput is steady
	// by this criterion over SteadyWindow, the first SteadyRamp left out;
	// RampUp is then the longest a ramp-up may last.
	RampUpUntil  string        `json:"ramp_until,omitempty"`
	SteadyWindow time.Duration `json:"steady_window,omitempty"`
	SteadyRamp   time.Duration `json:"steady_ramp,omitempty"`
	// Precision, when set, ends each measurement once its figures are
	// precise, after at least PrecisionMin; Step is then its longest.
	Precision    string        `json:"precision,omitempty"`
	PrecisionMin time.Duration `json:"precision_min,omitempty"`

	Backups BackupSpec `json:"backups,omitzero"`
	Noisy   NoisySpec  `json:"noisy,omitzero"`
}

// BackupSpec is a resolved backup scenario.
type BackupSpec struct {
	Cycles   int           `json:"cycles"`
	Restore  bool          `json:"restore"`
	Interval time.Duration `json:"interval"`
	Users    int           `json:"users"`
}

// NoisySpec is a resolved noisy-neighbour scenario.
type NoisySpec struct {
	Tenants  int           `json:"tenants"`
	Backups  int           `json:"backup_tenants"`
	Interval time.Duration `json:"interval"`
	Cycles   int           `json:"cycles"`
	Users    int           `json:"users"`
}

var scenarios = map[string]bool{"": true, "backup": true, "noisy-neighbour": true}

// defaultUsers are a database workload's user steps when its table gives none.
var defaultUsers = []int{1, 2, 4, 8}

func (v *validator) expand() *Plan {
	f := v.f
	p := &Plan{Name: f.Name, Description: f.Description, Results: f.Results}
	if p.Name == "" {
		v.addf("", "name", "the suite needs a name (it names the results directories)")
	}
	if p.Results == "" {
		p.Results = "results"
	}
	v.checkText()
	classes := v.classes()
	targets := map[string]Target{}
	for i, h := range f.Hosts {
		for _, err := range h.Problems() {
			v.addf(fmt.Sprintf("host[%d]", i), "", "%v", err)
		}
		if h.SSHConfig != "" {
			if err := fleet.SSHConfigProblem(h.SSHConfig); err != nil {
				v.addf(fmt.Sprintf("host[%d]", i), "ssh_config", "%v", err)
			}
		}
	}
	for _, err := range fleet.SetProblems(f.Hosts) {
		v.addf("host", "", "%v", err)
	}
	p.Hosts = f.Hosts
	for _, name := range sortedKeys(f.Targets) {
		t := f.Targets[name]
		table := "targets." + name
		switch {
		case strings.TrimSpace(t.Path) == "" && len(t.Paths) == 0:
			v.addf(table, "path", "every target needs a path: the directory on the storage under test")
		case t.Path != "" && len(t.Paths) > 0:
			v.addf(table, "paths", "give the target a path, or paths on several hosts, not both")
		}
		key, list := "path", []string{t.Path}
		if len(t.Paths) > 0 {
			key, list = "paths", t.Paths
		}
		targetsOn, errs := fleet.ResolveTargets(f.Hosts, list)
		for _, err := range errs {
			v.addf(table, key, "%v", err)
		}
		if len(t.Paths) > 0 {
			for _, ft := range targetsOn {
				if !ft.Remote() {
					v.addf(table, "paths", "%s is on this machine: paths spread a target over hosts, each written NAME:/path (name this machine as a host to include it)", ft.Path)
				}
			}
		}
		l, err := checkLimit(t.Limit)
		if err != nil {
			v.addf(table, "limit", "%v", err)
		}
		if t.Class != "" {
			if t.Limit != "" {
				v.addf(table, "class", "give the target a class or a limit, not both")
			} else if l, err = iolimit.SizeClass(t.Class, classes); err != nil {
				v.addf(table, "class", "%v", err)
			}
		}
		if (len(t.Paths) > 0 || onHost(t.Path)) && !l.IsZero() {
			v.addf(table, "limit", "a storage-class limit caps devices on this machine, and the target is on a host: drop the limit or the class")
		}
		targets[name] = Target{Name: name, Path: t.Path, Paths: t.Paths, Limits: l}
	}
	for _, name := range sortedKeys(f.Engines) {
		e := f.Engines[name]
		table := "engines." + name
		v.dsns[name] = v.engineDSN(table, e)
		if e.Engine == "" && v.dsns[name] != "" && v.env.EngineForDSN != nil {
			// The dsn chooses the engine, as --dsn without -e does.
			e.Engine = v.env.EngineForDSN(v.dsns[name])
			f.Engines[name] = e
		}
		switch {
		case e.Engine == "" && v.dsns[name] != "":
			v.addf(table, "engine", "the dsn does not say which engine it is for: give engine = \"postgres\" or \"mariadb\", or write the dsn as postgres://user@host:5432/db or mysql://user@host:3306/")
		case !contains(v.env.Engines, e.Engine):
			v.addf(table, "engine", "unknown engine %q: use one of %s", e.Engine, strings.Join(v.env.Engines, ", "))
		}
		if err := checkSize(e.BufferPool); err != nil {
			v.addf(table, "buffer_pool", "%q: use a size such as 256MB or 2GB", e.BufferPool)
		}
		if err := checkSize(e.ServerMemory); err != nil {
			v.addf(table, "server_memory", "%q: use a size such as 512MB or 4GB", e.ServerMemory)
		}
		if e.ServerMemory != "" && (e.DSN != "" || e.DSNEnv != "" || e.DSNFile != "") {
			bad := engine.ManagedOnlyError{Option: engine.ServerMemoryOption}
			v.addf(table, bad.Key(), "%s", bad.InTable())
		}
		if e.Transport != "" && e.Transport != "socket" && e.Transport != "tcp" {
			v.addf(table, "transport", "%q: use socket or tcp", e.Transport)
		}
	}
	for _, name := range sortedKeys(v.workloads) {
		v.checkWorkload(name, v.workloads[name])
	}
	if len(f.Runs) == 0 {
		v.addf("", "runs", "the suite has no [[runs]]: add at least one")
	}
	// Two entries may expand to the same name: the later one's runs are
	// numbered (tpcc-2), and every repetition of a run keeps the base name
	// it shares with the others, which expectations name.
	seen := map[string]int{}
	for i, r := range f.Runs {
		runs := v.expandRun(i, r, targets, maxRuns-len(p.Runs))
		renamed := map[string]string{}
		for j := range runs {
			base := runs[j].Name
			final, ok := renamed[base]
			if !ok {
				final = base
				if n := seen[base]; n > 0 {
					final = fmt.Sprintf("%s-%d", base, n+1)
				}
				seen[base]++
				renamed[base] = final
			}
			runs[j].Base, runs[j].Name = final, final
			if runs[j].Rep > 0 {
				runs[j].Name = fmt.Sprintf("%s-r%d", final, runs[j].Rep)
			}
		}
		p.Runs = append(p.Runs, runs...)
	}
	for i := range p.Runs {
		p.Runs[i].Index = i
	}
	p.Expect = v.expectations(p.Runs)
	p.Thresholds = v.thresholds(p.Runs)
	return p
}

// classes are the storage classes the suite sizes under [classes].
func (v *validator) classes() map[string]iolimit.Limits {
	out := map[string]iolimit.Limits{}
	for _, name := range sortedKeys(v.f.Classes) {
		l, err := iolimit.Parse(v.f.Classes[name])
		if err == nil && l.Preset != "" {
			err = fmt.Errorf("%q: size a class with riops, wiops, rbps and wbps, not a preset", v.f.Classes[name])
		}
		if err != nil {
			// Reported once, here; the targets of the class take no limits.
			v.addf("classes", name, "%v", err)
			l = iolimit.Limits{}
		}
		out[name] = l
	}
	return out
}

func (v *validator) checkWorkload(name string, w WorkloadDef) {
	table := "workloads." + name
	if _, known := v.definition(w.Kind); !known && w.Kind != KindDisk && w.Kind != KindReplay {
		v.addf(table, "kind", "unknown kind %q: use %s", w.Kind, v.kinds())
		return
	}
	if w.Kind == KindReplay {
		// The resolved capture is what the runs take.
		v.workloads[name] = v.checkReplay(table, w)
		return
	}
	if w.Users != nil && len(w.Users) == 0 {
		// users = [] would otherwise fall back to the default sequence unseen.
		v.addf(table, "users", "is empty: list the user counts to run, e.g. [1, 2, 4, 8], or leave users out for the default")
	}
	for _, u := range w.Users {
		if u <= 0 || u > maxUsers {
			v.addf(table, "users", "user counts must be whole numbers from 1 to %d, e.g. [1, 2, 4, 8]", maxUsers)
			break
		}
	}
	v.duration(table, w.rampKey, w.RampTime, 0, true)
	v.duration(table, w.runtimeKey, w.Runtime, 0, false)
	v.checkSteady(table, w)
	v.checkPrecision(table, w)
	if o, ok := w.Settings.(workload.StepsOwner); ok && w.Users != nil {
		if steps := o.OwnSteps(); steps != "" {
			v.addf(table, "users", "%s", suiteKeys(steps))
		}
	}
	for _, err := range settingsProblems(w.Settings) {
		var se *workload.SettingError
		if errors.As(err, &se) {
			v.addf(table, se.Key(), "%s", se.InTable())
		} else {
			v.addf(table, "", "%v", err)
		}
	}
	switch w.Kind {
	case "disk":
		if w.Rate != 0 || w.RatePerUser != 0 || w.Goal != "" {
			v.addf(table, "rate", "open-loop load and goal searches apply to database workloads, not to disk runs")
		}
		if w.Profile == "" {
			v.addf(table, "profile", "a disk workload needs a fio profile, e.g. four-corners")
		}
		if err := checkSize(w.Size); err != nil {
			v.addf(table, "size", "%q: use a size such as 1GB", w.Size)
		}
	default:
		v.checkOpenLoop(table, w)
	}
}

// DefaultSteadyWindow is the window ramp_until is judged over when
// steady_window is not given (the runner's default, which suite cannot import).
const DefaultSteadyWindow = 20 * time.Second

// checkSteady checks ramp_until and its window: fio's form on a series a
// database run records, whole seconds, and nothing of it on a disk run.
func (v *validator) checkSteady(table string, w WorkloadDef) {
	if w.RampUpUntil == "" {
		for _, k := range []struct{ key, val string }{{"steady_window", w.SteadyWindow}, {"steady_ramp", w.SteadyRamp}} {
			if k.val != "" {
				v.addf(table, k.key, "applies only with ramp_until: add ramp_until = \"tps_slope:1%%\" (say) or remove %s", k.key)
			}
		}
		return
	}
	if w.Kind == "disk" {
		v.addf(table, "ramp_until", "applies to database workloads; a disk run's points end at fio's steady state with steady_state")
		return
	}
	if c, err := steady.Parse(w.RampUpUntil); err != nil {
		v.addf(table, "ramp_until", "%v", err)
	} else if err := c.OnSeconds(); err != nil {
		v.addf(table, "ramp_until", "%q: %v", w.RampUpUntil, err)
	}
	window := v.duration(table, "steady_window", w.SteadyWindow, DefaultSteadyWindow, false)
	if window%time.Second != 0 || window < steady.MinWindow*time.Second {
		v.addf(table, "steady_window", "%q: use whole seconds, at least %ds, e.g. 20s", w.SteadyWindow, steady.MinWindow)
	}
	if ramp := v.duration(table, "steady_ramp", w.SteadyRamp, 0, true); ramp%time.Second != 0 {
		v.addf(table, "steady_ramp", "%q: use whole seconds, e.g. 10s", w.SteadyRamp)
	}
}

// DefaultPrecisionMin and MinPrecisionMin are the runner's shortest
// measurement under a precision bound when precision_min is not given,
// and the least it may be (which suite cannot import).
const (
	DefaultPrecisionMin = 30 * time.Second
	MinPrecisionMin     = 10 * time.Second
)

// checkPrecision checks precision and its minimum: the bound's form, whole
// seconds within the runtime, nothing of it on a disk run or a goal search.
func (v *validator) checkPrecision(table string, w WorkloadDef) {
	if w.Precision == "" {
		if w.PrecisionMin != "" {
			v.addf(table, "precision_min", "applies only with precision: add precision = \"2%%\" (say) or remove precision_min")
		}
		return
	}
	switch {
	case w.Kind == "disk":
		// Each fio point ends once precise, its runtime the ceiling; which
		// figures a point records, and the bound against the profile's
		// points, fio's configuration checks as the run is planned.
		if _, err := steady.ParsePrecision(w.Precision); err != nil {
			v.addf(table, "precision", "%v", err)
		}
		least := v.duration(table, "precision_min", w.PrecisionMin, DefaultPrecisionMin, false)
		if least%time.Second != 0 || least < MinPrecisionMin {
			v.addf(table, "precision_min", "%q: use whole seconds, at least %s, e.g. 30s", w.PrecisionMin, MinPrecisionMin)
		}
		return
	case w.Goal != "":
		v.addf(table, "precision", "a goal search's probes each judge a rate over their whole runtime: drop precision, or run the rate the goal finds as a workload of its own with precision")
	}
	if _, err := steady.ParsePrecision(w.Precision); err != nil {
		v.addf(table, "precision", "%v", err)
	}
	least := v.duration(table, "precision_min", w.PrecisionMin, DefaultPrecisionMin, false)
	runtime := parsedOr(w.Runtime, 2*time.Minute)
	switch {
	case least%time.Second != 0 || least < MinPrecisionMin:
		v.addf(table, "precision_min", "%q: use whole seconds, at least %s, e.g. 30s", w.PrecisionMin, MinPrecisionMin)
	case least > runtime:
		v.addf(table, "precision_min", "%s is longer than runtime (%s), the longest a measurement lasts: lengthen runtime or shorten precision_min", least, runtime)
	}
}

// parsedOr is a duration checkWorkload has already validated, def when
// absent or bad (the problem is reported there).
func parsedOr(s string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d
	}
	return def
}

// settingsProblems are a database workload's bad settings; a disk run has none.
func settingsProblems(s workload.Settings) []error {
	if s == nil {
		return nil
	}
	return s.Validate()
}

// kinds lists the workload kinds a suite may use: "tpcc, sysbench, as3ap, disk or replay".
func (v *validator) kinds() string {
	var names []string
	if v.env.Workloads != nil {
		names = v.env.Workloads.Names()
	}
	return strings.Join(append(names, KindDisk), ", ") + " or " + KindReplay
}

// maxUsers bounds every user count, as it bounds dbio's --users: each user
// is a connection and a goroutine, and a typo must not try a million.
const maxUsers = 100000

// maxRuns bounds the runs a suite expands to. Variants multiply (targets ×
// engines × buffer pools × repeat), and each run takes minutes; a suite past
// this is a typo, and expanding it would exhaust memory before anything ran.
const maxRuns = 1000

func (v *validator) expandRun(i int, r RunDef, targets map[string]Target, budget int) []Run {
	table := fmt.Sprintf("runs[%d]", i)
	w, ok := v.workloads[r.Workload]
	if !ok {
		v.addf(table, "workload", "no workload named %q (defined: %s)", r.Workload, strings.Join(sortedKeys(v.workloads), ", "))
		return nil
	}
	if !scenarios[r.Scenario] {
		v.addf(table, "scenario", "unknown scenario %q: use backup or noisy-neighbour (or leave it out)", r.Scenario)
	}
	if r.Scenario != "" && w.Precision != "" {
		v.addf(table, "scenario", "the %s scenario has phases of its own; precision (workloads.%s) ends the measurements of user steps: run the workload without a scenario, or drop precision", r.Scenario, r.Workload)
	}
	if r.Capture && w.Kind == "disk" {
		v.addf(table, "capture", "captures the block I/O a database's user steps send to its devices; a disk run is fio's own I/O: drop capture")
	}
	if r.Capture && r.Scenario != "" {
		v.addf(table, "capture", "records a run's user steps, and the %s scenario has phases of its own: drop capture or the scenario", r.Scenario)
	}
	if r.Scenario != "" && w.RampUpUntil != "" {
		v.addf(table, "scenario", "the %s scenario has phases of its own; ramp_until (workloads.%s) ends the ramp-ups of user steps: run the workload without a scenario, or drop ramp_until", r.Scenario, r.Workload)
	}
	target := func(key, name string) *Target {
		if name == "" {
			return nil
		}
		t, ok := targets[name]
		if !ok {
			v.addf(table, key, "no target named %q (defined: %s)", name, strings.Join(sortedKeys(targets), ", "))
			return nil
		}
		return &t
	}
	datas := v.stringList(table, "data", r.Data)
	if len(datas) == 0 {
		v.addf(table, "data", "every run needs a data target")
	}
	if contains(datas, "") {
		v.addf(table, "data", "an empty name: name a target defined under [targets]")
	}
	engines := v.stringList(table, "engine", r.Engine)
	if w.Kind == KindReplay {
		v.replayRunProblems(table, r, engines, target("log", r.Log), target("backup", r.Backup))
	} else if w.Kind != "disk" && len(engines) == 0 {
		v.addf(table, "engine", "a %s run needs an engine", w.Kind)
	}
	for _, e := range engines {
		if _, ok := v.f.Engines[e]; !ok {
			v.addf(table, "engine", "no engine named %q (defined: %s)", e, strings.Join(sortedKeys(v.f.Engines), ", "))
		}
	}
	pools := v.stringList(table, "buffer_pool", r.BufferPool)
	for _, s := range pools {
		if err := checkSize(s); err != nil {
			v.addf(table, "buffer_pool", "%q: use a size such as 256MB or 2GB", s)
		}
	}
	mems := v.stringList(table, "server_memory", r.ServerMemory)
	for _, s := range mems {
		if err := checkSize(s); err != nil {
			v.addf(table, "server_memory", "%q: use a size such as 512MB or 4GB", s)
		}
	}
	log, backup := target("log", r.Log), target("backup", r.Backup)
	for _, k := range []struct {
		key string
		t   *Target
	}{{"log", log}, {"backup", backup}} {
		if t := k.t; t != nil && t.OnHosts() {
			v.addf(table, k.key, "target %s is on other hosts, where a server keeps its %s with its data so far: use a target of this machine, or drop %s", t.Name, k.key, k.key)
		}
	}
	var bs BackupSpec
	var ns NoisySpec
	switch r.Scenario {
	case "backup":
		bs = BackupSpec{Cycles: r.Backups.Cycles, Restore: r.Backups.Restore, Users: r.Backups.Users,
			Interval: v.duration(table+".backups", "interval", r.Backups.Interval, 0, true)}
		if bs.Cycles < 1 {
			v.addf(table+".backups", "cycles", "a backup scenario needs cycles >= 1")
		}
		if bs.Users < 0 || bs.Users > maxUsers {
			v.addf(table+".backups", "users", "must be between 0 and %d", maxUsers)
		}
		if w.Kind == "disk" {
			v.addf(table, "scenario", "backups apply to database workloads, not to disk runs")
		}
	case "noisy-neighbour":
		ns = NoisySpec{Tenants: r.Noisy.Tenants, Backups: r.Noisy.Backups, Cycles: r.Noisy.Cycles, Users: r.Noisy.Users,
			Interval: v.duration(table+".noisy", "interval", r.Noisy.Interval, 100*time.Second, false)}
		if ns.Tenants < 1 {
			v.addf(table+".noisy", "tenants", "a noisy-neighbour run needs tenants >= 1")
		}
		if ns.Users < 0 || ns.Users > maxUsers {
			v.addf(table+".noisy", "users", "must be between 0 and %d", maxUsers)
		}
		if ns.Backups < 0 || ns.Backups >= ns.Tenants && ns.Tenants > 0 {
			v.addf(table+".noisy", "backup_tenants", "must be between 0 and tenants - 1 (%d)", ns.Tenants-1)
		}
		if ns.Backups > 0 && ns.Cycles < 1 {
			v.addf(table+".noisy", "cycles", "backup tenants need cycles >= 1")
		}
	}
	if len(engines) == 0 {
		engines = []string{""}
	}
	if len(pools) == 0 {
		pools = []string{""}
	}
	if len(mems) == 0 {
		mems = []string{""}
	}
	if r.Repeat < 0 {
		v.addf(table, "repeat", "must be 1 or more")
	}
	if n := float64(len(datas)) * float64(len(engines)) * float64(len(pools)) * float64(len(mems)) * float64(max(r.Repeat, 1)); n > float64(budget) {
		key := "data"
		if r.Repeat > 1 {
			key = "repeat"
		}
		v.addf(table, key, "the suite would expand to more than %d runs (this entry alone to %.0f): cross fewer variants or split the study into several suites", maxRuns, n)
		return nil
	}
	var out []Run
	for _, d := range datas {
		dt := target("data", d)
		if dt == nil {
			continue
		}
		driver := v.driver(table, r, w, *dt, engines, log, backup)
		for _, e := range engines {
			for _, bp := range pools {
				for _, mem := range mems {
					run := Run{
						Kind: w.Kind, Scenario: r.Scenario, Capture: r.Capture, Driver: driver, Data: *dt, Log: log, Backup: backup,
						Workload: w, Users: w.Users, Backups: bs, Noisy: ns,
						RampUp: v.duration("workloads."+r.Workload, w.rampKey, w.RampTime, 30*time.Second, true),
						Step:   v.duration("workloads."+r.Workload, w.runtimeKey, w.Runtime, 2*time.Minute, false),
					}
					if w.Kind == KindReplay {
						// A replay lasts as long as its capture's requests take.
						run.RampUp, run.Step = 0, 0
					}
					if w.RampUpUntil != "" {
						run.RampUpUntil = w.RampUpUntil
						run.SteadyWindow = parsedOr(w.SteadyWindow, DefaultSteadyWindow)
						run.SteadyRamp = parsedOr(w.SteadyRamp, 0)
					}
					if w.Precision != "" {
						run.Precision = w.Precision
						run.PrecisionMin = parsedOr(w.PrecisionMin, DefaultPrecisionMin)
					}
					variant := map[string]string{}
					if len(datas) > 1 {
						variant["data"] = d
					}
					if driver != "" {
						// Where the users ran tells a run on hosts from the
						// same workload's other runs, as a crossed value does.
						variant["driver"] = driver
					}
					if e != "" {
						ed := v.f.Engines[e]
						run.Engine, run.Settings, run.DSN, run.Transport = ed.Engine, ed.Settings, secret.DSN(v.dsns[e]), ed.Transport
						if n, err := units.ParseBytes(ed.BufferPool); err == nil {
							run.BufferPool = n
						}
						if n, err := units.ParseBytes(ed.ServerMemory); err == nil {
							run.ServerMemory = n
						}
						if len(engines) > 1 {
							variant["engine"] = e
						}
					}
					if bp != "" {
						if n, err := units.ParseBytes(bp); err == nil {
							run.BufferPool = n
						}
						if len(pools) > 1 {
							variant["buffer_pool"] = bp
						}
					}
					if mem != "" {
						if n, err := units.ParseBytes(mem); err == nil {
							run.ServerMemory = n
						}
						if len(mems) > 1 {
							variant["server_memory"] = mem
						}
					}
					if w.Settings != nil {
						if len(run.Users) == 0 {
							run.Users = append([]int(nil), defaultUsers...)
						}
						run.Users, _ = w.Settings.Steps(run.Users)
						if w.Goal != "" && len(run.Users) > 1 {
							// A goal search probes with one user count: a
							// stepping workload's first, else the most asked for.
							if def, _ := v.definition(w.Kind); def.RunDefaults.OwnSteps != "" {
								run.Users = run.Users[:1]
							} else {
								run.Users = []int{slices.Max(run.Users)}
							}
						}
					}
					run.Variant = variant
					run.Name = runName(r.Name, r.Workload, variant)
					out = append(out, run)
				}
			}
		}
	}
	if r.UntilDecided {
		margin, ok := parseMargin(r.Margin)
		switch {
		case len(out) != 2:
			v.addf(table, "until_decided", "a sequential comparison is of two variants (A and B), and this run crosses %d: cross one key with two values, or drop until_decided", len(out))
		case r.Repeat < 5:
			v.addf(table, "repeat", "with until_decided repeat is the most runs a side, and the sequential test needs 5 or more to call a difference: give repeat = 10 (say)")
		case !ok:
			v.addf(table, "margin", "%q: give a percentage from 0%% to 50%%, e.g. \"5%%\"", r.Margin)
		}
		for i := range out {
			out[i].UntilDecided, out[i].MarginPct = true, margin
		}
	} else if r.Margin != "" {
		v.addf(table, "margin", "applies only with until_decided = true: add it or drop margin")
	}
	if r.Repeat <= 1 {
		return out
	}
	// Interleave the repetitions, A B A B, so drift affects every variant alike.
	var reps []Run
	for rep := 1; rep <= r.Repeat; rep++ {
		for _, run := range out {
			run.Rep = rep
			reps = append(reps, run)
		}
	}
	return reps
}

// parseMargin reads a sequential comparison's margin, "5%" when empty, as
// a percentage from 0 to 50.
func parseMargin(s string) (float64, bool) {
	if strings.TrimSpace(s) == "" {
		return 5, true
	}
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil || !(v >= 0 && v <= 50) {
		return 0, false
	}
	return v, true
}

// VariantLabel names the crossed values the run takes, in key order:
// "buffer_pool=64MB data=nvme"; empty when it varies nothing.
func (r Run) VariantLabel() string {
	keys := sortedKeys(r.Variant)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + r.Variant[k]
	}
	return strings.Join(parts, " ")
}

func runName(name, workload string, variant map[string]string) string {
	if name == "" {
		name = workload
	}
	for _, k := range []string{"data", "engine", "buffer_pool", "server_memory"} {
		if v, ok := variant[k]; ok {
			name += "-" + v
		}
	}
	return name
}

// Estimator gives a run's expected duration and disk space; the caller
// knows the workloads' figures, the suite only adds them up.
type Estimator func(r Run) Estimated

// Estimated is a run's expected time, typical and at most (every ramp-up
// and measurement at its ceiling), and the space it needs.
type Estimated struct {
	Typical, Ceiling time.Duration
	Space            uint64
}

// DryRun prints the expanded plan with each run's estimated duration and space.
func (p *Plan) DryRun(w io.Writer, est Estimator) error {
	fmt.Fprintf(w, "suite %s: %d runs, results under %s\n", p.Name, len(p.Runs), p.Results)
	if p.Description != "" {
		fmt.Fprintf(w, "%s\n", p.Description)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\trun\tkind\tengine\tdata\tlimits\tusers\tscenario\test. time\test. space")
	var typical, ceiling time.Duration
	var space uint64
	for _, r := range p.Runs {
		e := est(r)
		typical, ceiling = typical+e.Typical, ceiling+e.Ceiling
		space = max(space, e.Space)
		users := workload.UserSteps(r.Users)
		if r.Workload.Settings != nil {
			_, users = r.Workload.Settings.Steps(r.Users)
		}
		limits := r.Data.Limits.String()
		switch {
		case r.Data.Limits.Preset != "":
			limits = r.Data.Limits.Preset
		case r.Data.Limits.Class != "":
			limits = r.Data.Limits.Class + " class: " + limits
		}
		if limits == "" {
			limits = "-"
		}
		engine := r.Engine
		if engine == "" {
			engine = "-"
		}
		if r.ServerMemory > 0 {
			engine += " (memory " + units.FormatBytes(uint64(r.ServerMemory)) + ")"
		}
		scenario := r.Scenario
		if scenario == "" {
			scenario = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Index+1, r.Name, r.Kind, engine, r.Data.Name, limits, users, scenario,
			estimatedTime(e.Typical, e.Ceiling), units.FormatBytes(e.Space))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "estimated total: %s; largest run needs %s free on its data target\n", estimatedTime(typical, ceiling), units.FormatBytes(space))
	if err := p.printTargets(w); err != nil {
		return err
	}
	p.printHosts(w)
	return nil
}

// estimatedTime is a typical time, with its ceiling when that is longer.
func estimatedTime(typical, ceiling time.Duration) string {
	t := typical.Round(time.Second).String()
	if ceiling.Round(time.Second) > typical.Round(time.Second) {
		t += " (at most " + ceiling.Round(time.Second).String() + ")"
	}
	return t
}

// printTargets says where each target the runs use resolves to, so that a
// dry run shows which directories (and so which disks) a suite will write.
func (p *Plan) printTargets(w io.Writer) error {
	seen := map[string]bool{}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target	role	path")
	for _, r := range p.Runs {
		for _, t := range []struct {
			role string
			t    *Target
		}{{"data", &r.Data}, {"log", r.Log}, {"backup", r.Backup}} {
			if t.t == nil || (t.t.Path == "" && len(t.t.Paths) == 0) || seen[t.role+"\x00"+t.t.Name] {
				continue
			}
			seen[t.role+"\x00"+t.t.Name] = true
			path := t.t.Path
			if t.t.OnHosts() {
				path = strings.Join(t.t.Dirs(), ", ") // on the hosts, as written
			} else if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.t.Name, t.role, path)
		}
	}
	return tw.Flush()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// onHost says whether a target path is on another host.
func onHost(path string) bool {
	t, err := fleet.ParseTarget(path)
	return err == nil && t.Remote()
}

// OnHosts says whether the target is on other hosts (one or several).
func (t Target) OnHosts() bool { return len(t.Paths) > 0 || onHost(t.Path) }

// Dirs are the target's directories: its path, or its paths on hosts.
func (t Target) Dirs() []string {
	if len(t.Paths) > 0 {
		return t.Paths
	}
	return []string{t.Path}
}

// flagName matches a flag named in a message written for the command line.
var flagName = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)

// suiteKeys rewrites a message's flags as a suite file's keys:
// "--keying-thinking" becomes "keying_thinking".
func suiteKeys(msg string) string {
	return flagName.ReplaceAllStringFunc(msg, func(f string) string {
		return strings.ReplaceAll(strings.TrimPrefix(f, "--"), "-", "_")
	})
}
