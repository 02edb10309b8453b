package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"dbio/internal/engine"
	"dbio/internal/execx"
	"dbio/internal/fio"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/suite"
	"dbio/internal/units"
	"dbio/internal/workload"
)

// WorkloadFactory builds a suite run's workload.
type WorkloadFactory func(r suite.Run) (workload.Built, error)

// Suite is a validated suite plan with what executing it needs.
type Suite struct {
	Plan *suite.Plan
	// Workloads build database workloads by kind; cmd/dbio wires them.
	Workloads map[string]WorkloadFactory
	Engines   *engine.Registry
	Exec      execx.Runner
	// Compare renders a comparison of comparable runs into out.
	Compare func(dirs []string, out string) error
	// Report renders one run's report into its directory.
	Report  func(dir string) (string, error)
	Command []string
	// CreateTargets makes the targets that do not exist yet (--create-target).
	CreateTargets bool
}

// SuiteRun is how one run of a suite went.
type SuiteRun struct {
	Name   string         `json:"name"`
	Kind   string         `json:"kind"`
	Dir    string         `json:"dir,omitempty"`
	Status results.Status `json:"status"`
	Error  string         `json:"error,omitempty"`
}

// SuiteOutcome is what a suite produced.
type SuiteOutcome struct {
	Dir         string     `json:"dir"`
	Runs        []SuiteRun `json:"runs"`
	Comparisons []string   `json:"comparisons,omitempty"`
}

// RunSuite executes every run of the plan in order, each into its own
// results directory under one suite directory, then writes a comparison of
// each group of comparable runs. A failed run is recorded and the suite goes
// on; cancellation stops it.
func RunSuite(ctx context.Context, s Suite, env Env) (SuiteOutcome, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	var out SuiteOutcome
	// Every run's problems before anything is written, then every target
	// held by this suite from its first run to its last.
	if err := s.Preflight(env.SysFS); err != nil {
		return out, err
	}
	release, err := LockTargets(env.SysFS, s.suiteTargets(), s.CreateTargets, Holder(s.Command, env.Now()))
	if err != nil {
		return out, err
	}
	defer release()
	if err := os.MkdirAll(s.Plan.Results, 0o755); err != nil {
		return out, fmt.Errorf("results directory: %w", err)
	}
	base := filepath.Join(s.Plan.Results, env.Now().Format("20060102-150405")+"-suite-"+safeName(s.Plan.Name))
	if err := os.Mkdir(base, 0o755); err != nil {
		return out, fmt.Errorf("suite directory: %w", err)
	}
	out.Dir = base
	save := func() {
		_ = results.WriteJSON(filepath.Join(base, "suite.json"), map[string]any{"plan": s.Plan, "outcome": out, "command": s.Command})
	}
	save()
	var failed []string
	for i, r := range s.Plan.Runs {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(env.Out, "\n=== suite %s: run %d of %d: %s ===\n", s.Plan.Name, i+1, len(s.Plan.Runs), r.Name)
		sr := SuiteRun{Name: r.Name, Kind: r.Kind}
		dir, status, err := s.runOne(ctx, r, base, env)
		sr.Dir, sr.Status = dir, status
		if err != nil {
			sr.Error = err.Error()
			failed = append(failed, r.Name)
			fmt.Fprintf(env.Out, "run %s: %s: %v\n", r.Name, status, err)
		}
		if dir != "" && s.Report != nil {
			if p, err := s.Report(dir); err == nil {
				fmt.Fprintf(env.Out, "report: %s\n", p)
			}
		}
		out.Runs = append(out.Runs, sr)
		save()
	}
	if s.Compare != nil {
		for _, g := range comparableGroups(s.Plan.Runs, out.Runs) {
			file := filepath.Join(base, "compare-"+safeName(g.key)+".html")
			if err := s.Compare(g.dirs, file); err != nil {
				fmt.Fprintf(env.Out, "warning: comparison %s: %v\n", g.key, err)
				continue
			}
			out.Comparisons = append(out.Comparisons, file)
			fmt.Fprintf(env.Out, "comparison: %s\n", file)
			if md, err := abTable(g, base); err != nil {
				fmt.Fprintf(env.Out, "warning: A/B table %s: %v\n", g.key, err)
			} else if md != "" {
				out.Comparisons = append(out.Comparisons, md)
				fmt.Fprintf(env.Out, "A/B table: %s\n", md)
			}
		}
	}
	save()
	switch {
	case ctx.Err() != nil:
		return out, fmt.Errorf("suite interrupted: %w", ctx.Err())
	case len(failed) > 0:
		return out, fmt.Errorf("%d of %d runs failed: %s", len(failed), len(s.Plan.Runs), strings.Join(failed, ", "))
	}
	return out, nil
}

type group struct {
	key  string
	dirs []string
	// variants label each dir's crossed values ("buffer_pool=64MB").
	variants []string
}

// comparableGroups gathers the finished runs that share a workload
// definition and scenario, in plan order: those differ only in the crossed
// variants (target, engine, buffer pool) and can be put side by side.
func comparableGroups(plan []suite.Run, runs []SuiteRun) []group {
	byKey := map[string]*group{}
	var order []string
	for i, r := range runs {
		if r.Dir == "" || i >= len(plan) {
			continue
		}
		p := plan[i]
		wl, _ := json.Marshal(p.Workload)
		key := p.Kind
		if p.Scenario != "" {
			key += "-" + p.Scenario
		}
		full := key + string(wl)
		g, ok := byKey[full]
		if !ok {
			g = &group{key: key}
			byKey[full] = g
			order = append(order, full)
		}
		g.dirs = append(g.dirs, r.Dir)
		g.variants = append(g.variants, variantLabel(p.Variant))
	}
	var out []group
	names := map[string]int{}
	for _, k := range order {
		g := byKey[k]
		if len(g.dirs) < 2 {
			continue
		}
		names[g.key]++
		if names[g.key] > 1 {
			g.key = fmt.Sprintf("%s-%d", g.key, names[g.key])
		}
		out = append(out, *g)
	}
	return out
}

func variantLabel(v map[string]string) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + v[k]
	}
	return strings.Join(parts, " ")
}

// abTable writes the A/B table of a group whose runs take exactly two
// variants (with their repetitions): ab-<key>.md and .json in the suite directory.
func abTable(g group, base string) (string, error) {
	var labels []string
	side := map[string][]string{}
	for i, v := range g.variants {
		if _, ok := side[v]; !ok {
			labels = append(labels, v)
		}
		side[v] = append(side[v], g.dirs[i])
	}
	if len(labels) != 2 {
		return "", nil
	}
	stem := filepath.Join(base, "ab-"+safeName(g.key))
	res, err := report.WriteAB(stem, side[labels[0]], side[labels[1]], labels[0], labels[1])
	if err != nil {
		return "", err
	}
	if len(res.Steps) == 0 {
		// No user steps to compare (backup cycles, say): no table.
		os.Remove(stem + ".json")
		os.Remove(stem + ".md")
		return "", nil
	}
	return stem + ".md", nil
}

func safeName(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, s), "-")
}

// runOne executes one run of the suite.
func (s Suite) runOne(ctx context.Context, r suite.Run, base string, env Env) (string, results.Status, error) {
	if r.Kind == "disk" {
		return s.runDisk(ctx, r, base, env)
	}
	factory, ok := s.Workloads[r.Kind]
	if !ok {
		return "", results.StatusFailed, fmt.Errorf("no workload of kind %q", r.Kind)
	}
	eng, err := s.Engines.Lookup(r.Engine)
	if err != nil {
		return "", results.StatusFailed, err
	}
	built, err := factory(r)
	if err != nil {
		return "", results.StatusFailed, err
	}
	if built.Users != nil {
		r.Users = built.Users
	}
	cfg, _ := json.Marshal(r)
	p := Plan{
		Name:    r.Name,
		Kind:    r.Kind,
		Command: s.Command,
		Config:  json.RawMessage(cfg),
		Engine:  eng,
		EngineOptions: engine.Options{BufferPool: r.BufferPool, ServerMemory: r.ServerMemory, Settings: r.Settings, DSN: r.DSN.Reveal(), Transport: r.Transport,
			Database: "dbio_" + r.Kind, Fresh: true},
		Workload:    built.Workload,
		SpaceNeeded: built.SpaceNeeded,
		StopWhen:    built.StopWhen,
		Conclude:    built.Conclude,
		Users:       r.Users,
		RampUp:      r.RampUp,
		Step:        r.Step,
		ResultsBase: base,
		Limits:      r.Data.Limits,
		TargetsHeld: true,
	}
	if p.EngineOptions.Transport == "" && r.DSN == "" {
		// An existing server is reached the way its DSN says.
		p.EngineOptions.Transport = "socket"
	}
	if r.DSN == "" {
		p.DataPath = r.Data.Path
		if r.Log != nil {
			p.LogPath = r.Log.Path
		}
	}
	if r.Backup != nil {
		p.BackupPath = r.Backup.Path
	}
	switch r.Scenario {
	case "backup":
		p.Backups = &Backups{Cycles: r.Backups.Cycles, Restore: r.Backups.Restore, Interval: r.Backups.Interval, Users: r.Backups.Users}
	case "noisy-neighbour":
		p.Noisy = &Noisy{Tenants: r.Noisy.Tenants, BackupTenants: r.Noisy.Backups, Interval: r.Noisy.Interval, Cycles: r.Noisy.Cycles, Users: r.Noisy.Users}
		if p.Noisy.Users == 0 && len(r.Users) > 0 {
			p.Noisy.Users = r.Users[0]
		}
	}
	if built.Recorded != nil {
		// The config the workload's command records, so that a suite's run
		// and a command's compare alike.
		c := Config{Engine: eng.Name(), Target: r.Data.Path, Users: p.Users, Stepping: built.Stepping,
			RampUpS: r.RampUp.Seconds(), StepS: r.Step.Seconds(), Workload: r.Kind, Settings: built.Recorded,
			EngineOptions: EngineConfig{BufferPoolBytes: r.BufferPool, ServerMemoryBytes: r.ServerMemory, Settings: r.Settings, External: r.DSN != "",
				Database: p.EngineOptions.Database, Transport: p.EngineOptions.Transport},
			Limits: r.Data.Limits, Backups: p.Backups, Noisy: p.Noisy}
		if r.Log != nil {
			c.LogTarget = r.Log.Path
		}
		p.Config = c
	}
	o, err := Run(ctx, p, env)
	if err == nil {
		for _, c := range o.Checks {
			if !c.Passed && !c.Skipped {
				err = fmt.Errorf("consistency check failed: %s", c.Name)
				o.Status = results.StatusFailed
				break
			}
		}
	}
	return o.Dir, o.Status, err
}

// runDisk characterizes the run's data target with fio, under its limits.
func (s Suite) runDisk(ctx context.Context, r suite.Run, base string, env Env) (string, results.Status, error) {
	c := fio.Config{Profile: r.Workload.Profile, Targets: []string{r.Data.Path}, SysFS: env.SysFS}
	if r.Workload.Runtime != "" {
		d, _ := time.ParseDuration(r.Workload.Runtime)
		c.Runtime = d
	}
	if r.Workload.Size != "" {
		n, _ := units.ParseBytes(r.Workload.Size)
		c.Size = n
	}
	o, err := RunDisk(ctx, DiskPlan{
		Name: r.Name, Command: s.Command, Config: r,
		Fio:         FioPhase{Config: c, Exec: s.Exec, Limits: r.Data.Limits},
		TargetsHeld: true, ResultsBase: base,
	}, env)
	if o.Dir == "" && err != nil {
		o.Status = results.StatusFailed
	}
	return o.Dir, o.Status, err
}
