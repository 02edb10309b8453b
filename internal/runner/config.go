package runner

import (
	"bytes"
	"encoding/json"

	"dbio/internal/iolimit"
)

// Config is the resolved configuration of a database workload's run, as
// run.json records it: one shape for every workload, whether its run came
// from flags or from a suite file: the run's placement and users, the workload's
// stepping beside its users, its timing, its settings under its name, and
// the engine's options.
type Config struct {
	Engine    string
	Target    string
	LogTarget string
	Users     []int
	// Stepping is a workload's own user stepping (AS3AP's start, add, ceiling), if any.
	Stepping any
	RampUpS  float64
	StepS    float64
	// Steady is the ramp-up until steady state, nil for a fixed ramp-up.
	Steady *SteadyRampUp
	// Pacing and Goal are the open-loop load and the latency goal search, if any.
	Pacing *PacingConfig
	Goal   *GoalConfig
	// Workload names the key Settings are recorded under.
	Workload      string
	Settings      any
	EngineOptions EngineConfig
	Limits        iolimit.Limits
	Backups       *Backups
	Noisy         *Noisy
}

// RunConfig is the configuration run.json records of p, a database
// workload's plan, whether flags or a suite file resolved it: target and
// logTarget as the user named them, steps as the user asked for them
// (recorded whatever the body runs instead), and what the workload's Build
// recorded of its stepping and settings (the settings under the workload's
// name). The engine options and limits are read from the plan, and the
// body records its own part, so that they are recorded as run.
func (p Plan) RunConfig(steps Steps, workload, target, logTarget string, stepping, settings any) Config {
	o := p.EngineOptions
	c := Config{Engine: p.Engine.Name(), Target: target, LogTarget: logTarget, Users: steps.Users, Stepping: stepping,
		RampUpS: steps.RampUp.Seconds(), StepS: steps.Step.Seconds(), Steady: steps.Steady, Workload: workload, Settings: settings,
		EngineOptions: EngineConfig{BufferPoolBytes: o.BufferPool, ServerMemoryBytes: o.ServerMemory, Settings: o.Settings,
			External: o.DSN != "", Database: o.Database, Transport: o.Transport},
		Limits: p.Limits}
	if steps.Pacing != nil {
		c.Pacing = steps.Pacing.Record()
	}
	if p.Body != nil {
		p.Body.configure(&c)
	}
	return c
}

// EngineConfig is what run.json records of the engine's options.
type EngineConfig struct {
	BufferPoolBytes int64 `json:"buffer_pool_bytes,omitempty"`
	// ServerMemoryBytes is the cap on the server's whole memory, page cache included.
	ServerMemoryBytes int64             `json:"server_memory_bytes,omitempty"`
	Settings          map[string]string `json:"settings,omitempty"`
	External          bool              `json:"external"`
	Database          string            `json:"database"`
	Transport         string            `json:"transport"`
}

// MarshalJSON writes the keys in the order above, the stepping's keys
// spliced in after the users.
func (c Config) MarshalJSON() ([]byte, error) {
	return joinObjects(
		struct {
			Engine    string `json:"engine"`
			Target    string `json:"target,omitempty"`
			LogTarget string `json:"log_target,omitempty"`
			Users     []int  `json:"users"`
		}{c.Engine, c.Target, c.LogTarget, c.Users},
		c.Stepping,
		struct {
			RampUpS float64 `json:"rampup_s"`
			StepS   float64 `json:"step_s"`
		}{c.RampUpS, c.StepS},
		c.steadyJSON(),
		struct {
			Pacing *PacingConfig `json:"pacing,omitempty"`
			Goal   *GoalConfig   `json:"goal,omitempty"`
		}{c.Pacing, c.Goal},
		map[string]any{c.Workload: c.Settings},
		struct {
			EngineOptions EngineConfig   `json:"engine_options"`
			Limits        iolimit.Limits `json:"limits,omitzero"`
			Backups       *Backups       `json:"backups,omitempty"`
			Noisy         *Noisy         `json:"noisy,omitempty"`
		}{c.EngineOptions, c.Limits, c.Backups, c.Noisy},
	)
}

// steadyJSON records the ramp-up until steady state beside the ramp-up it
// shortens; nil adds nothing.
func (c Config) steadyJSON() any {
	if c.Steady == nil {
		return nil
	}
	return struct {
		Until   string  `json:"ramp_until"`
		WindowS float64 `json:"steady_window_s"`
		RampS   float64 `json:"steady_ramp_s,omitempty"`
	}{c.Steady.Criterion.String(), c.Steady.Window.Seconds(), c.Steady.Ignore.Seconds()}
}

// joinObjects writes the keys of several JSON objects as one object; nil
// parts add nothing.
func joinObjects(parts ...any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, p := range parts {
		if p == nil {
			continue
		}
		j, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		inner := bytes.TrimSpace(j[1 : len(j)-1])
		if len(inner) == 0 {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(inner)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
