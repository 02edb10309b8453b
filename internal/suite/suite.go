// Package suite reads a study from a TOML file: named targets with roles and
// limits, engines with their settings, workloads, and runs that cross them
// (two targets × two buffer-pool sizes, say). It validates the whole file
// before anything starts, pointing each problem at its line and key, and
// expands it into an ordered plan of fully resolved runs.
package suite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"dbio/internal/fleet"
	"dbio/internal/iolimit"
	"dbio/internal/units"
	"dbio/internal/workload"
)

// File is a suite file as written.
type File struct {
	Name    string `toml:"name"`
	Results string `toml:"results"`
	// Description says what the study reproduces; it goes into the report.
	Description string `toml:"description"`
	// Classes size storage classes by name ("nvme" = "riops=...,wiops=..."):
	// a target's class is one of them, or one sized from them (sata, from nvme).
	Classes map[string]string `toml:"classes"`
	// Hosts are the hosts a target may be on ("h1:/srv/data"), reached with
	// the user's ssh ([[host]] tables).
	Hosts   []fleet.Host         `toml:"host"`
	Targets map[string]TargetDef `toml:"targets"`
	Engines map[string]EngineDef `toml:"engines"`
	// Workloads are decoded table by table, each into its kind's definition.
	Workloads map[string]map[string]any `toml:"workloads"`
	Runs      []RunDef                  `toml:"runs"`
	// Expect are the findings the suite's runs should reproduce.
	Expect []ExpectDef `toml:"expect"`
	// Thresholds are bounds on recorded figures the runs must meet.
	Thresholds []ThresholdDef `toml:"threshold"`
}

// TargetDef is a storage location.
type TargetDef struct {
	// Path is the directory, on this machine or on a host ("h1:/srv/data").
	Path string `toml:"path"`
	// Paths spread the target over several hosts' directories, measured
	// at once by a disk run (a fleet): "h1:/srv/data", "h2:/srv/data".
	Paths []string `toml:"paths"`
	// Limit emulates a storage class: "riops=5000,wiops=3000,rbps=250MB,wbps=200MB" or a preset.
	Limit string `toml:"limit"`
	// Class emulates a storage class sized from the suite's [classes]:
	// "nvme" as sized there, "sata" the study's ratio slower.
	Class string `toml:"class"`
}

// EngineDef is an engine with its settings.
type EngineDef struct {
	Engine     string `toml:"engine"`
	BufferPool string `toml:"buffer_pool"`
	// ServerMemory caps the managed server's whole memory, page cache
	// included (a memory cgroup), e.g. "512MB"; a run's server_memory
	// overrides it.
	ServerMemory string            `toml:"server_memory"`
	Settings     map[string]string `toml:"settings"`
	DSN          string            `toml:"dsn"`
	Transport    string            `toml:"transport"`
	// DSNEnv and DSNFile give the DSN without writing its password in the
	// suite file: the name of an environment variable holding it, or a file
	// (relative to the working directory, like every path of a suite).
	DSNEnv  string `toml:"dsn_env"`
	DSNFile string `toml:"dsn_file"`
}

// WorkloadDef is a [workloads.x] table: its kind, the keys every workload
// shares, and the settings of the kind's registered definition, decoded
// from the table's other keys.
type WorkloadDef struct {
	Kind string `toml:"kind" json:"kind"` // a registered workload, disk or replay
	// Users are a database workload's user steps.
	Users []int `toml:"users" json:"users,omitempty"`
	// RampTime is the warm-up before each step or fio point, excluded from
	// its figures; Runtime is the measured time of each. They are named as
	// the command line's --ramp-time and --runtime (fio's names).
	RampTime string `toml:"ramp_time" json:"ramp_time,omitempty"`
	Runtime  string `toml:"runtime" json:"runtime,omitempty"`
	// OldRampUp and OldStep are the old keys of ramp_time and runtime,
	// still read (with a notice) for a while.
	OldRampUp string `toml:"rampup" json:"-"`
	OldStep   string `toml:"step" json:"-"`
	// RampUntil ends each ramp-up once throughput is steady, in fio's
	// form ("nopm_slope:0.5%"); ramp_time is then its longest. SteadyWindow
	// is the window judged and SteadyRamp the start of the ramp-up left out.
	RampUpUntil  string `toml:"ramp_until" json:"ramp_until,omitempty"`
	SteadyWindow string `toml:"steady_window" json:"steady_window,omitempty"`
	SteadyRamp   string `toml:"steady_ramp" json:"steady_ramp,omitempty"`
	// Precision ends each measurement once its figures are precise, as
	// --precision takes it ("nopm:2%"); runtime is then its longest and
	// PrecisionMin its shortest.
	Precision    string `toml:"precision" json:"precision,omitempty"`
	PrecisionMin string `toml:"precision_min" json:"precision_min,omitempty"`
	// Open-loop load, for database workloads: the offered rate in total or
	// per user, the schedule, and the late tolerance; see OpenLoop.
	Rate          float64 `toml:"rate" json:"rate,omitempty"`
	RatePerUser   float64 `toml:"rate_per_user" json:"rate_per_user,omitempty"`
	Arrival       string  `toml:"arrival" json:"arrival,omitempty"`
	LateTolerance string  `toml:"late_tolerance" json:"late_tolerance,omitempty"`
	// A latency goal search instead of the user steps: the objective, the
	// highest rate probed, the resolution, the probe budget, and whether
	// to probe the answer's ends again.
	Goal           string  `toml:"goal" json:"goal,omitempty"`
	GoalMax        float64 `toml:"goal_max" json:"goal_max,omitempty"`
	GoalResolution string  `toml:"goal_resolution" json:"goal_resolution,omitempty"`
	GoalProbes     int     `toml:"goal_probes" json:"goal_probes,omitempty"`
	GoalConfirm    bool    `toml:"goal_confirm" json:"goal_confirm,omitempty"`
	// fio, for disk runs
	Profile string `toml:"profile" json:"profile,omitempty"`
	Size    string `toml:"size" json:"size,omitempty"`
	// A replay of a capture (kind = "replay"): the directory dbio capture
	// wrote, relative to the suite file's directory (or absolute), resolved
	// by validation into the path the run reads; the pace ("recorded", the
	// default, or "max") and the speed that scales the recorded pace.
	CaptureDir string  `toml:"capture" json:"capture,omitempty"`
	Pace       string  `toml:"pace" json:"pace,omitempty"`
	Speed      float64 `toml:"speed" json:"speed,omitempty"`
	// Settings are a database workload's own, nil for a disk run.
	Settings workload.Settings `toml:"-" json:"settings,omitempty"`
	// rampKey and runtimeKey are the keys the file gave the timings under,
	// for locating their problems.
	rampKey, runtimeKey string
}

// sharedKeys are the keys of every workload's table; a disk run's table
// adds diskKeys, a replay's replayKeys. The rest belong to the kind's definition.
var (
	sharedKeys = []string{"kind", "users", "ramp_time", "runtime", "rampup", "step", "ramp_until", "steady_window", "steady_ramp", "precision", "precision_min",
		"rate", "rate_per_user", "arrival", "late_tolerance", "goal", "goal_max", "goal_resolution", "goal_probes", "goal_confirm"}
	diskKeys = []string{"profile", "size"}
	// replayKeys are a replay's table's keys beside the shared ones.
	replayKeys = []string{"capture", "pace", "speed"}
)

// renamedKeys are old keys still read, each with its new name.
var renamedKeys = []struct{ old, new string }{{"rampup", "ramp_time"}, {"step", "runtime"}}

// RunDef is one run, or several when a field lists alternatives to cross.
type RunDef struct {
	Name     string `toml:"name"`
	Workload string `toml:"workload"`
	// Engine, Data, BufferPool and ServerMemory may each be one value or a
	// list to cross.
	Engine       any    `toml:"engine"`
	Data         any    `toml:"data"`
	Log          string `toml:"log"`
	Backup       string `toml:"backup"`
	BufferPool   any    `toml:"buffer_pool"`
	ServerMemory any    `toml:"server_memory"`
	// Repeat runs every variant this many times, interleaved (A B A B), so a
	// comparison of two variants can show its spread: an A/B study.
	Repeat int `toml:"repeat"`
	// UntilDecided compares the two variants' repeats after each round
	// with a sequential test (dbio ab --until-decided's), and runs no more
	// rounds once it has decided: Repeat is then the most runs a side.
	// Margin is the difference either way under which the sides count as
	// not different ("5%", the default; "0%" never stops for that).
	UntilDecided bool   `toml:"until_decided"`
	Margin       string `toml:"margin"`
	// Driver is where a database run on hosts runs its users: "host"
	// (the default: dbio on each database host drives its own server) or
	// "coordinator" (this dbio drives the user's server on the host over
	// the network, by the engine's DSN).
	Driver string `toml:"driver"`
	// Scenario is "", "backup" or "noisy-neighbour".
	Scenario string `toml:"scenario"`
	// Capture records the block I/O of the devices under the run's data
	// and log targets while its user steps run, as --capture does.
	Capture bool      `toml:"capture"`
	Backups BackupDef `toml:"backups"`
	Noisy   NoisyDef  `toml:"noisy"`
}

// BackupDef configures backup and restore cycles.
type BackupDef struct {
	Cycles   int    `toml:"cycles"`
	Restore  bool   `toml:"restore"`
	Interval string `toml:"interval"`
	// Users keep TPC-C running during the backups; 0 backs up an idle database.
	Users int `toml:"users"`
}

// NoisyDef configures a noisy-neighbour run.
type NoisyDef struct {
	Tenants  int    `toml:"tenants"`
	Backups  int    `toml:"backup_tenants"`
	Interval string `toml:"interval"`
	Cycles   int    `toml:"cycles"`
	Users    int    `toml:"users"`
}

// Problem is one validation error, located in the file.
type Problem struct {
	Line int
	Key  string
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", p.Line, shownKey(p.Key), p.Msg)
	}
	return fmt.Sprintf("%s: %s", shownKey(p.Key), p.Msg)
}

// Problems is every problem of a file, reported at once.
type Problems struct {
	File  string
	Items []Problem
}

func (ps *Problems) Error() string {
	lines := make([]string, len(ps.Items))
	for i, p := range ps.Items {
		lines[i] = ps.File + ": " + p.String()
	}
	return strings.Join(lines, "\n")
}

// Env is what reading a suite takes from outside its file.
type Env struct {
	// Getenv reads the environment for dsn_env (nil: nothing is set).
	Getenv func(string) string
	// Engines are the engine names a suite may use.
	Engines []string
	// EngineForDSN names the engine a DSN is written for, by its scheme
	// (postgres://, mysql://) or its form, "" when it cannot tell (nil:
	// never); an engine table with a dsn and no engine takes it, as the
	// command line's --dsn without -e does.
	EngineForDSN func(dsn string) string
	// Workloads are the kinds of database workload a suite may use, beside
	// disk and replay.
	Workloads *workload.Registry
	// Figures are the figures an expectation may compare.
	Figures []string
}

// Load reads, decodes and validates a suite file, returning its plan.
func Load(path string, env Env) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("suite file: %w", err)
	}
	return Parse(path, b, env)
}

// Parse decodes and validates suite text; name is used in messages.
func Parse(name string, b []byte, env Env) (*Plan, error) {
	var f File
	dec := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields()
	// Unknown keys do not stop the decoder: they are reported with every
	// other problem of the file, all at once.
	var unknown []Problem
	if err := dec.Decode(&f); err != nil {
		var de *toml.DecodeError
		var sm *toml.StrictMissingError
		switch {
		case errors.As(err, &sm):
			for _, e := range sm.Errors {
				row, _ := e.Position()
				unknown = append(unknown, Problem{Line: row, Key: strings.Join(e.Key(), "."), Msg: "unknown key" + suggest(reflect.TypeOf(f), e.Key())})
			}
		case errors.As(err, &de):
			row, _ := de.Position()
			return nil, &Problems{File: name, Items: []Problem{{Line: row, Key: strings.Join(de.Key(), "."), Msg: typeWords(de.Error())}}}
		default:
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	v := &validator{f: &f, loc: newLocator(b), file: name, env: env, dsns: map[string]string{}, workloads: map[string]WorkloadDef{}}
	if ps := append(unknown, v.decodeWorkloads()...); len(ps) > 0 {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
		return nil, &Problems{File: name, Items: ps}
	}
	plan := v.expand()
	plan.Notices = v.notices
	if len(v.problems) > 0 {
		sort.SliceStable(v.problems, func(i, j int) bool { return v.problems[i].Line < v.problems[j].Line })
		return nil, &Problems{File: name, Items: v.problems}
	}
	return plan, nil
}

type validator struct {
	f        *File
	loc      *locator
	file     string
	problems []Problem
	env      Env
	// workloads are the decoded [workloads.x] tables.
	workloads map[string]WorkloadDef
	// dsns are the engines' DSNs, from dsn, dsn_env or dsn_file.
	dsns map[string]string
	// notices are the old keys the file uses, each with its new name.
	notices []string
}

// engineDSN reads an engine's DSN from the one of dsn, dsn_env and dsn_file
// it gives, reporting a variable that is not set or a file that cannot be read.
func (v *validator) engineDSN(table string, e EngineDef) string {
	given := 0
	for _, s := range []string{e.DSN, e.DSNEnv, e.DSNFile} {
		if s != "" {
			given++
		}
	}
	switch {
	case given > 1:
		key := "dsn_env"
		if e.DSNEnv == "" {
			key = "dsn_file"
		}
		v.addf(table, key, "give the DSN one way: dsn, dsn_env or dsn_file, not several")
		return ""
	case e.DSNEnv != "":
		var dsn string
		if v.env.Getenv != nil {
			dsn = strings.TrimSpace(v.env.Getenv(e.DSNEnv))
		}
		if dsn == "" {
			v.addf(table, "dsn_env", "the environment variable %s is not set or empty: export it with the DSN before running the suite", e.DSNEnv)
		}
		return dsn
	case e.DSNFile != "":
		b, err := os.ReadFile(e.DSNFile)
		if err != nil {
			v.addf(table, "dsn_file", "%v: write the DSN into that file (one line, readable by you alone)", err)
			return ""
		}
		dsn := strings.TrimSpace(string(b))
		if dsn == "" {
			v.addf(table, "dsn_file", "%s is empty: write the DSN into it (one line)", e.DSNFile)
		}
		return dsn
	}
	return e.DSN
}

func (v *validator) addf(table, key, format string, a ...any) {
	full := key
	if key == "" {
		full = table
	} else if table != "" {
		full = table + "." + key
	}
	p := Problem{Line: v.loc.line(table, key), Key: full, Msg: fmt.Sprintf(format, a...)}
	// A workload's problem is found again for each run that uses it; say it once.
	for _, q := range v.problems {
		if q == p {
			return
		}
	}
	v.problems = append(v.problems, p)
}

func (v *validator) duration(table, key, s string, def time.Duration, allowZero bool) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || (d == 0 && !allowZero) {
		v.addf(table, key, "%q is not a positive duration: write it like 30s, 5m or 1h", s)
		return def
	}
	return d
}

// strings reads a field that may hold one string or a list of strings.
func (v *validator) stringList(table, key string, x any) []string {
	switch t := x.(type) {
	case nil:
		return nil
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				v.addf(table, key, "expected a name or a list of names in quotes")
				return nil
			}
			out = append(out, s)
		}
		return out
	default:
		v.addf(table, key, "expected a name or a list of names in quotes")
		return nil
	}
}

func checkSize(s string) error {
	if s == "" {
		return nil
	}
	n, err := units.ParseBytes(s)
	if err == nil && n <= 0 {
		err = errors.New("must be positive")
	}
	return err
}

func checkLimit(s string) (iolimit.Limits, error) {
	if s == "" {
		return iolimit.Limits{}, nil
	}
	return iolimit.Parse(s)
}

// decodeWorkloads decodes each [workloads.x] table: the shared keys into a
// WorkloadDef, the rest into the settings of its kind's definition, so a key
// no definition knows is refused at its line as every unknown key is.
func (v *validator) decodeWorkloads() []Problem {
	var ps []Problem
	for _, name := range sortedKeys(v.f.Workloads) {
		table := "workloads." + name
		raw := v.f.Workloads[name]
		kind, _ := raw["kind"].(string)
		shared := sharedKeys
		switch kind {
		case KindDisk:
			shared = append(append([]string(nil), sharedKeys...), diskKeys...)
		case KindReplay:
			shared = append(append([]string(nil), sharedKeys...), replayKeys...)
		}
		common, own := map[string]any{}, map[string]any{}
		for k, x := range raw {
			if contains(shared, k) {
				common[k] = x
			} else {
				own[k] = x
			}
		}
		var w WorkloadDef
		ps = append(ps, v.decodeTable(table, common, &w)...)
		ps = append(ps, v.renamed(table, &w)...)
		switch def, known := v.definition(kind); {
		case kind == KindDisk || kind == KindReplay:
			ps = append(ps, v.decodeTable(table, own, &struct{}{}, shared...)...)
		case known:
			w.Settings = def.New()
			ps = append(ps, v.decodeTable(table, own, w.Settings.Table(), shared...)...)
		}
		v.workloads[name] = w
	}
	return ps
}

// renamed moves the values of old keys to their new names, with a notice
// for each; a value given under both names is a problem, since one would
// silently win.
func (v *validator) renamed(table string, w *WorkloadDef) []Problem {
	w.rampKey, w.runtimeKey = "ramp_time", "runtime"
	var ps []Problem
	move := func(oldKey, newKey string, old string, dst *string, key *string) {
		if old == "" {
			return
		}
		if *dst != "" {
			ps = append(ps, Problem{Line: v.loc.line(table, oldKey), Key: table + "." + oldKey,
				Msg: fmt.Sprintf("%s is the old name of %s, which is given too: keep %s", oldKey, newKey, newKey)})
			return
		}
		*dst, *key = old, oldKey
		v.notices = append(v.notices, fmt.Sprintf("%s: line %d: %s.%s is now %s; the old key still works for now but will go",
			v.file, v.loc.line(table, oldKey), table, oldKey, newKey))
	}
	move("rampup", "ramp_time", w.OldRampUp, &w.RampTime, &w.rampKey)
	move("step", "runtime", w.OldStep, &w.Runtime, &w.runtimeKey)
	return ps
}

// decodeTable decodes one table's keys strictly into dst, locating each
// problem at its key's line.
func (v *validator) decodeTable(table string, keys map[string]any, dst any, alsoKnown ...string) []Problem {
	if len(keys) == 0 {
		return nil
	}
	b, err := toml.Marshal(keys)
	if err != nil {
		return []Problem{{Line: v.loc.line(table, ""), Key: table, Msg: err.Error()}}
	}
	err = toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields().Decode(dst)
	var de *toml.DecodeError
	var sm *toml.StrictMissingError
	if !errors.As(err, &sm) && errors.As(err, &de) && len(de.Key()) > 0 {
		// A key of the wrong type stops the decoder: decode the rest
		// without it, so that the table's other problems come out too.
		if _, ok := keys[de.Key()[0]]; ok {
			rest := make(map[string]any, len(keys)-1)
			for k, val := range keys {
				if k != de.Key()[0] {
					rest[k] = val
				}
			}
			first := Problem{Line: v.loc.line(table, de.Key()[0]), Key: strings.Join(append([]string{table}, de.Key()...), "."), Msg: typeWords(de.Error())}
			return append([]Problem{first}, v.decodeTable(table, rest, dst, alsoKnown...)...)
		}
	}
	located := func(key []string, msg string) Problem {
		k := ""
		if len(key) > 0 {
			k = key[0]
		}
		return Problem{Line: v.loc.line(table, k), Key: strings.Join(append([]string{table}, key...), "."), Msg: msg}
	}
	switch {
	case err == nil:
		return nil
	case errors.As(err, &sm):
		var ps []Problem
		for _, e := range sm.Errors {
			ps = append(ps, located(e.Key(), "unknown key"+suggest(reflect.TypeOf(dst), e.Key(), alsoKnown...)))
		}
		return ps
	case errors.As(err, &de):
		return []Problem{located(de.Key(), typeWords(de.Error()))}
	}
	return []Problem{located(nil, err.Error())}
}

// definition is the registered definition of a workload kind.
func (v *validator) definition(kind string) (workload.Definition, bool) {
	if v.env.Workloads == nil {
		return workload.Definition{}, false
	}
	return v.env.Workloads.Get(kind)
}
