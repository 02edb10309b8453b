package results

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"dbio/internal/units"
)

// RunConfig is run.json's config: the run's configuration as resolved,
// every default filled in, written by the runner and read back by every
// reader as this one type. A disk run records fio's configuration (Disk)
// and nothing else; a database workload's run records the rest: where it
// ran and with how many users, the workload's own stepping beside them,
// its timing, its open-loop load or goal search, the workload's settings
// under its name, the engine's options, the storage limits, and the
// backup cycles or noisy-neighbour study its body ran. The run's kind says
// which; a config that records nothing is null.
type RunConfig struct {
	// Disk is a disk run's configuration.
	Disk *DiskConfig

	Engine string
	// Target and LogTarget are the targets as the user named them.
	Target    string
	LogTarget string
	// Users are the virtual users of each step.
	Users []int
	// Stepping is the workload's own stepping of its users (AS3AP's start,
	// add and ceiling), recorded beside them; none for most workloads and
	// for a goal search.
	Stepping Settings
	// RampUpS and StepS are each step's ramp-up and measured time, in seconds.
	RampUpS float64
	StepS   float64
	// Steady is the ramp-up until steady state, nil for ramp-ups of fixed length.
	Steady *SteadyConfig
	// Precision is the measurement until precise, nil for measurements of
	// fixed length.
	Precision *PrecisionConfig
	// Pacing is the open-loop load, nil for a closed-loop run; Goal the
	// latency goal search that ran instead of the user steps.
	Pacing *PacingConfig
	Goal   *GoalConfig
	// Workload names the workload, its Settings recorded under its name.
	Workload      string
	Settings      Settings
	EngineOptions EngineConfig
	Limits        LimitsConfig
	// Backups and Noisy are the scenario the run's body ran instead of the
	// user steps, if any.
	Backups *BackupsConfig
	Noisy   *NoisyConfig
}

// SteadyConfig is a ramp-up that ends once throughput is steady.
type SteadyConfig struct {
	// Until is the criterion, in fio's form ("nopm_slope:0.5%").
	Until string
	// WindowS is the window judged; RampS the start of each ramp-up left
	// out of every window (0: none), in seconds.
	WindowS float64
	RampS   float64
}

// PrecisionConfig is a measurement that ends once its figures are precise.
type PrecisionConfig struct {
	// Bound is the bound as --precision takes it ("nopm:2%").
	Bound string
	// MinS is the shortest measurement, in seconds.
	MinS float64
}

// PacingConfig is what the config records of an open-loop load.
type PacingConfig struct {
	Arrival string `json:"arrival"`
	// RateTPS is the offered rate over all users; RatePerUserTPS each
	// user's, when the rate was given per user.
	RateTPS         float64 `json:"rate_tps,omitempty"`
	RatePerUserTPS  float64 `json:"rate_per_user_tps,omitempty"`
	LateToleranceMS float64 `json:"late_tolerance_ms"`
	Seed            uint64  `json:"seed"`
}

// GoalConfig is what the config records of a latency goal search.
type GoalConfig struct {
	Objective  string  `json:"objective"`
	Users      int     `json:"users"`
	StartTPS   float64 `json:"start_tps"`
	MaxTPS     float64 `json:"max_tps"`
	Factor     float64 `json:"factor"`
	Resolution string  `json:"resolution"`
	// Tolerance is the share of the offered rate a probe may fall short by
	// and still count as achieving it.
	Tolerance float64 `json:"tolerance"`
	MaxProbes int     `json:"max_probes,omitempty"`
	Confirm   bool    `json:"confirm,omitempty"`
}

// EngineConfig is what the config records of the engine's options.
type EngineConfig struct {
	BufferPoolBytes int64 `json:"buffer_pool_bytes,omitempty"`
	// ServerMemoryBytes is the cap on the server's whole memory, page cache included.
	ServerMemoryBytes int64             `json:"server_memory_bytes,omitempty"`
	Settings          map[string]string `json:"settings,omitempty"`
	// External says the run used a server the user gave (a DSN), not one dbio managed.
	External  bool   `json:"external"`
	Database  string `json:"database"`
	Transport string `json:"transport"`
}

// LimitsConfig is the storage class a run emulated on its targets' disks,
// as asked (StorageLimit is how each target was capped).
type LimitsConfig struct {
	ReadIOPS  int64 `json:"riops,omitempty"`
	WriteIOPS int64 `json:"wiops,omitempty"`
	// ReadBPS and WriteBPS are bytes per second.
	ReadBPS  int64 `json:"rbps,omitempty"`
	WriteBPS int64 `json:"wbps,omitempty"`
	// Preset and Class name the preset and the storage class the caps came
	// from, if any.
	Preset string `json:"preset,omitempty"`
	Class  string `json:"class,omitempty"`
}

// IsZero says no cap was asked for (a name alone caps nothing).
func (l LimitsConfig) IsZero() bool {
	return l.ReadIOPS == 0 && l.WriteIOPS == 0 && l.ReadBPS == 0 && l.WriteBPS == 0
}

// BackupsConfig is what the config records of backup and restore cycles.
type BackupsConfig struct {
	Cycles   int           `json:"cycles"`
	Restore  bool          `json:"restore"`
	Interval time.Duration `json:"interval"`
	// Users keep the workload running during each backup; 0 backs up an idle database.
	Users int `json:"users"`
}

// NoisyConfig is what the config records of the noisy-neighbour study.
type NoisyConfig struct {
	Tenants       int           `json:"tenants"`
	BackupTenants int           `json:"backup_tenants"`
	Interval      time.Duration `json:"interval"`
	Cycles        int           `json:"cycles"`
	Users         int           `json:"users"`
}

// DiskConfig is a disk run's configuration: fio's as the run resolved it,
// durations as text ("60s", "" when not set) and sizes in bytes.
type DiskConfig struct {
	Profile string `json:"profile"`
	// Dialect names the tool whose command line the run translated
	// ("DiskSpd", "SQLIO"), so that its report can also speak that tool's
	// language; "" for fio's own profiles.
	Dialect string   `json:"dialect,omitempty"`
	Targets []string `json:"targets"`
	// Group runs each point on all targets at once (a drive group).
	Group   bool   `json:"group,omitempty"`
	Runtime string `json:"runtime,omitempty"`
	Ramp    string `json:"ramp,omitempty"`
	// SizeBytes is the working file on each target.
	SizeBytes  int64     `json:"size_bytes,omitempty"`
	IODepths   []int     `json:"iodepths,omitempty"`
	Jobs       int       `json:"jobs,omitempty"`
	Engine     string    `json:"engine,omitempty"`
	BlockSizes []int64   `json:"block_sizes,omitempty"`
	RW         []string  `json:"rw,omitempty"`
	ReadPct    *int      `json:"read_pct,omitempty"`
	RatePcts   []float64 `json:"rate_pcts,omitempty"`
	// LatencyMax and LatencyStat are the latency bound as given
	// (--latency-max, --latency-stat), "" when not set.
	LatencyMax   string      `json:"latency_max,omitempty"`
	LatencyStat  LatencyStat `json:"latency_stat,omitempty"`
	SteadyState  string      `json:"steady_state,omitempty"`
	SteadyWindow string      `json:"steady_window,omitempty"`
	SteadyRamp   string      `json:"steady_ramp,omitempty"`
	Buffered     bool        `json:"buffered,omitempty"`
	WriteThrough bool        `json:"write_through,omitempty"`
	BlockAlign   int64       `json:"block_align,omitempty"`
	// CPUs and MemoryBytes are the host's, as the profiles sized the run by them.
	CPUs        int    `json:"cpus,omitempty"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// Hosts are a fleet run's hosts, as the user gave them.
	Hosts []HostConfig `json:"hosts,omitempty"`
	// Precision is the bound each point was to end at once precise, as
	// --precision took it ("iops:2%,p99:10%"), and its minimum.
	Precision     string  `json:"precision,omitempty"`
	PrecisionMinS float64 `json:"precision_min_s,omitempty"`
}

// HostConfig is a host of a fleet run as given (a suite's [[host]], --host).
type HostConfig struct {
	Name         string `json:"name"`
	Destination  string `json:"destination"`
	SSHConfig    string `json:"ssh_config,omitempty"`
	Fio          string `json:"fio,omitempty"`
	WorkDir      string `json:"work_dir,omitempty"`
	Address      string `json:"address,omitempty"`
	FioPort      int    `json:"fio_port,omitempty"`
	FioServer    string `json:"fio_server,omitempty"`
	NodeExporter string `json:"node_exporter,omitempty"`
}

// IsZero says the config records nothing.
func (c RunConfig) IsZero() bool { return reflect.ValueOf(c).IsZero() }

// MarshalJSON writes a database workload's config in its keys' order: the
// run's placement and users, the workload's stepping beside its users, the
// timing, the open-loop load, the workload's settings under its name, then
// the engine, the limits and the scenario. A disk run's is fio's.
func (c RunConfig) MarshalJSON() ([]byte, error) {
	if c.Disk != nil {
		return json.Marshal(c.Disk)
	}
	if c.IsZero() {
		return []byte("null"), nil
	}
	var o object
	o.add("engine", c.Engine)
	if c.Target != "" {
		o.add("target", c.Target)
	}
	if c.LogTarget != "" {
		o.add("log_target", c.LogTarget)
	}
	o.add("users", c.Users)
	for _, s := range c.Stepping {
		o.add(s.Name, s.Value)
	}
	o.add("rampup_s", c.RampUpS)
	o.add("step_s", c.StepS)
	if s := c.Steady; s != nil {
		o.add("ramp_until", s.Until)
		o.add("steady_window_s", s.WindowS)
		if s.RampS != 0 {
			o.add("steady_ramp_s", s.RampS)
		}
	}
	if p := c.Precision; p != nil {
		o.add("precision", p.Bound)
		o.add("precision_min_s", p.MinS)
	}
	if c.Pacing != nil {
		o.add("pacing", c.Pacing)
	}
	if c.Goal != nil {
		o.add("goal", c.Goal)
	}
	if c.Workload != "" || c.Settings != nil {
		o.add(c.Workload, c.Settings)
	}
	o.add("engine_options", c.EngineOptions)
	if !c.Limits.IsZero() {
		o.add("limits", c.Limits)
	}
	if c.Backups != nil {
		o.add("backups", c.Backups)
	}
	if c.Noisy != nil {
		o.add("noisy", c.Noisy)
	}
	return o.bytes()
}

// databaseKeys are the keys of a database workload's config other than the
// workload's own (its settings and its stepping).
var databaseKeys = map[string]bool{"engine": true, "target": true, "log_target": true, "users": true, "rampup_s": true, "step_s": true,
	"ramp_until": true, "steady_window_s": true, "steady_ramp_s": true, "precision": true, "precision_min_s": true, "pacing": true, "goal": true, "engine_options": true,
	"limits": true, "backups": true, "noisy": true}

// UnmarshalJSON reads every shape run.json's config has had: a disk run's
// (fio's, with its profile), a database workload's, and a suite's run as
// dbio recorded it before a suite's runs were recorded as their commands'
// (the suite's own record, with its data target and workload table), read
// into the same fields.
// Of a database workload's, the keys that are not dbio's own are the
// workload's: the one holding an object (or null) its settings, under its
// name, the others its stepping.
func (c *RunConfig) UnmarshalJSON(b []byte) error {
	*c = RunConfig{}
	var top Settings
	if err := json.Unmarshal(b, &top); err != nil {
		return err
	}
	_, profile := top.Lookup("profile")
	_, engine := top.Lookup("engine")
	table, _ := top.Lookup("workload")
	data, _ := top.Lookup("data")
	_, suiteTable := table.(Settings)
	_, suiteData := data.(Settings)
	switch {
	case top == nil:
		return nil
	case suiteTable && suiteData:
		return c.decodeSuiteRun(b)
	case profile && !engine:
		c.Disk = &DiskConfig{}
		return json.Unmarshal(b, c.Disk)
	}
	var known struct {
		Engine        string         `json:"engine"`
		Target        string         `json:"target"`
		LogTarget     string         `json:"log_target"`
		Users         []int          `json:"users"`
		RampUpS       float64        `json:"rampup_s"`
		StepS         float64        `json:"step_s"`
		RampUntil     *string        `json:"ramp_until"`
		SteadyWindowS float64        `json:"steady_window_s"`
		SteadyRampS   float64        `json:"steady_ramp_s"`
		Precision     *string        `json:"precision"`
		PrecisionMinS float64        `json:"precision_min_s"`
		Pacing        *PacingConfig  `json:"pacing"`
		Goal          *GoalConfig    `json:"goal"`
		EngineOptions EngineConfig   `json:"engine_options"`
		Limits        LimitsConfig   `json:"limits"`
		Backups       *BackupsConfig `json:"backups"`
		Noisy         *NoisyConfig   `json:"noisy"`
	}
	if err := json.Unmarshal(b, &known); err != nil {
		return err
	}
	*c = RunConfig{Engine: known.Engine, Target: known.Target, LogTarget: known.LogTarget, Users: known.Users,
		RampUpS: known.RampUpS, StepS: known.StepS, Pacing: known.Pacing, Goal: known.Goal,
		EngineOptions: known.EngineOptions, Limits: known.Limits, Backups: known.Backups, Noisy: known.Noisy}
	if known.RampUntil != nil {
		c.Steady = &SteadyConfig{Until: *known.RampUntil, WindowS: known.SteadyWindowS, RampS: known.SteadyRampS}
	}
	if known.Precision != nil {
		c.Precision = &PrecisionConfig{Bound: *known.Precision, MinS: known.PrecisionMinS}
	}
	workload := false
	for _, s := range top {
		if databaseKeys[s.Name] {
			continue
		}
		switch v := s.Value.(type) {
		case Settings:
			if !workload {
				c.Workload, c.Settings, workload = s.Name, v, true
				continue
			}
		case nil:
			if !workload {
				c.Workload, workload = s.Name, true
				continue
			}
		}
		c.Stepping = append(c.Stepping, s)
	}
	return nil
}

// decodeSuiteRun reads a suite's run as an older dbio recorded it (the
// suite's own record of the run, durations in nanoseconds, the workload
// table's keys capitalized before it had its own names) into the fields a
// command's run records: its engine and its options, its targets, users
// and timing, its workload's settings when the table held them, limits
// and scenario; a disk run's profile, targets, timing and size as fio's.
func (c *RunConfig) decodeSuiteRun(b []byte) error {
	type target struct {
		Path   string       `json:"path"`
		Paths  []string     `json:"paths"`
		Limits LimitsConfig `json:"limits"`
	}
	var r struct {
		Kind         string            `json:"kind"`
		Engine       string            `json:"engine"`
		BufferPool   int64             `json:"buffer_pool_bytes"`
		ServerMemory int64             `json:"server_memory_bytes"`
		Settings     map[string]string `json:"settings"`
		DSN          string            `json:"dsn"`
		Transport    string            `json:"transport"`
		Data         target            `json:"data"`
		Log          *target           `json:"log"`
		Workload     struct {
			Kind     string   `json:"kind"`
			Users    []int    `json:"users"`
			RampTime string   `json:"ramp_time"`
			Runtime  string   `json:"runtime"`
			Profile  string   `json:"profile"`
			Size     string   `json:"size"`
			Settings Settings `json:"settings"`
		} `json:"workload"`
		Users        []int          `json:"users"`
		RampUp       time.Duration  `json:"rampup"`
		Step         time.Duration  `json:"step"`
		RampUntil    string         `json:"ramp_until"`
		SteadyWindow time.Duration  `json:"steady_window"`
		SteadyRamp   time.Duration  `json:"steady_ramp"`
		Backups      *BackupsConfig `json:"backups"`
		Noisy        *NoisyConfig   `json:"noisy"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("a suite's run: %w", err)
	}
	if r.Kind == "disk" {
		d := &DiskConfig{Profile: r.Workload.Profile, Targets: r.Data.Paths, Runtime: r.Workload.Runtime, Ramp: r.Workload.RampTime}
		if len(d.Targets) == 0 && r.Data.Path != "" {
			d.Targets = []string{r.Data.Path}
		}
		if n, err := units.ParseBytes(r.Workload.Size); err == nil {
			d.SizeBytes = n
		}
		c.Disk = d
		return nil
	}
	*c = RunConfig{Engine: r.Engine, Target: r.Data.Path, Users: r.Users, RampUpS: r.RampUp.Seconds(), StepS: r.Step.Seconds(),
		Workload: r.Kind, Settings: r.Workload.Settings,
		EngineOptions: EngineConfig{BufferPoolBytes: r.BufferPool, ServerMemoryBytes: r.ServerMemory, Settings: r.Settings,
			External: r.DSN != "", Transport: r.Transport},
		Limits: r.Data.Limits, Backups: r.Backups, Noisy: r.Noisy}
	if r.Log != nil {
		c.LogTarget = r.Log.Path
	}
	if len(c.Users) == 0 {
		c.Users = r.Workload.Users
	}
	if r.RampUntil != "" {
		c.Steady = &SteadyConfig{Until: r.RampUntil, WindowS: r.SteadyWindow.Seconds(), RampS: r.SteadyRamp.Seconds()}
	}
	return nil
}
