package runner

import (
	"fmt"

	"dbio/internal/results"
)

// RunConfig is the configuration run.json records of p, a database
// workload's plan, whether flags or a suite file resolved it: target and
// logTarget as the user named them, steps as the user asked for them
// (recorded whatever the body runs instead), and what the workload's Build
// recorded of its stepping and settings (the settings under the workload's
// name). The engine options and limits are read from the plan, and the
// body records its own part, so that they are recorded as run.
func (p Plan) RunConfig(steps Steps, workload, target, logTarget string, stepping, settings any) (results.RunConfig, error) {
	o := p.EngineOptions
	c := results.RunConfig{Engine: p.Engine.Name(), Target: target, LogTarget: logTarget, Users: steps.Users,
		RampUpS: steps.RampUp.Seconds(), StepS: steps.Step.Seconds(), Workload: workload,
		EngineOptions: results.EngineConfig{BufferPoolBytes: o.BufferPool, ServerMemoryBytes: o.ServerMemory, Settings: o.Settings,
			External: o.DSN != "", Database: o.Database, Transport: o.Transport},
		Limits: results.LimitsConfig(p.Limits)}
	var err error
	if c.Stepping, err = results.SettingsOf(stepping); err != nil {
		return c, fmt.Errorf("%s's stepping: %w", workload, err)
	}
	if c.Settings, err = results.SettingsOf(settings); err != nil {
		return c, fmt.Errorf("%s's settings: %w", workload, err)
	}
	if s := steps.Steady; s != nil {
		c.Steady = &results.SteadyConfig{Until: s.Criterion.String(), WindowS: s.Window.Seconds(), RampS: s.Ignore.Seconds()}
	}
	if p := steps.Precision; p != nil {
		c.Precision = &results.PrecisionConfig{Bound: p.Precision.String(), MinS: p.Min.Seconds()}
	}
	if steps.Pacing != nil {
		c.Pacing = steps.Pacing.Record()
	}
	if p.Body != nil {
		p.Body.configure(&c)
	}
	return c, nil
}
