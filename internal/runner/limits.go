package runner

import (
	"fmt"
	"os"

	"dbio/internal/engine"
	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/telemetry"
)

// limitedPlacement readies storage-class limits for a run: one block-I/O
// cgroup for the physical disks behind the placement's targets. A server
// engine starts inside it (through Options.Wrap, as its own user); an
// in-process engine (SQLite) means dbio itself joins it for the run. The
// caps bind once apply is called, when the run begins to measure: the
// server's start and the load run at the device's own speed. The returned
// release undoes it; the note describes it for run.json. env's samplers
// read what the group was served every second until release.
func limitedPlacement(host iolimit.Host, sys target.SysFS, name string, l iolimit.Limits, pl engine.Placement, caps engine.Capabilities, opts *engine.Options, env *Env) (apply, lift, release func() error, note string, limit *results.StorageLimit, err error) {
	if l.IsZero() {
		none := func() error { return nil }
		return none, nil, none, "", nil, nil
	}
	seen := map[string]bool{}
	var devices []string
	for _, t := range []*target.Target{pl.Data, pl.Log} {
		if t == nil {
			continue
		}
		st, err := t.Storage(sys)
		if err != nil {
			return nil, nil, nil, "", nil, fmt.Errorf("limits on %s: %w", t.Path, err)
		}
		for _, d := range st.Physical {
			if !seen[d.DevNumber] {
				seen[d.DevNumber] = true
				devices = append(devices, d.DevNumber)
			}
		}
	}
	g, err := host.Prepare(name, devices, l)
	if err != nil {
		return nil, nil, nil, "", nil, fmt.Errorf("--limit %s: %w", l, err)
	}
	limit = storageLimit(g)
	note = fmt.Sprintf("storage-class emulation: %s on devices %v through %s cgroup %s, binding from the first measured phase (the server's start and the load run at the device's own speed)", l, devices, g.Version, g.Path)
	if p, ok := iolimit.LookupPreset(l.Preset); ok {
		note += " (preset " + l.Preset + ": " + p.Source + ")"
	}
	// The delay the cap adds happens before the device: /proc/diskstats
	// does not see it, and the group's own wait is kept only by some
	// kernels. What the group was served against its caps is sampled.
	// Every process the run caps is in this one group (a noisy run's
	// tenants share it), so its counters are their sum.
	env.ioGroup = func() (telemetry.IOGroup, error) { return ioGroupUsage(g) }
	note += "; what the group is served against each cap is sampled every second (iocap_*)"
	if g.Version == "v2-io" {
		note += ", and its own I/O stall from io.pressure (iocap_pressure_*)"
	}
	if file, why := g.IOWait(); file == "" {
		note += "; the group's own I/O wait is not available: " + why + " (the database's own waits are recorded where its engine times them, and its threads' block-I/O delay where the kernel accounts it)"
	} else {
		note += "; the kernel keeps the group's own I/O wait in " + file + ", which dbio does not sample"
	}
	if c, ok := iolimit.LookupClass(l.Class); ok {
		note += " (" + c.Name + " class: " + c.Source
		if c.Of != "" {
			note += fmt.Sprintf("; sized as the %s class's caps divided by %g; its %gx latency is not emulated, block-I/O cgroups cap rates only", c.Of, c.Slower, c.Latency)
		}
		note += ")"
	}
	if caps.ServerProcess {
		opts.Wrap = g.Wrap
		opts.RunAs = g.AllowUser
		return g.Apply, g.Lift, g.Remove, note, limit, nil
	}
	// The engine runs inside dbio: dbio joins the group, and leaves it when
	// the group is removed (Remove moves its members back to the parent).
	if err := g.AddPID(os.Getpid()); err != nil {
		g.Remove()
		return nil, nil, nil, "", nil, err
	}
	return g.Apply, g.Lift, g.Remove, note + "; the engine runs inside dbio, so dbio's own I/O to these devices is capped too", limit, nil
}

// ioGroupUsage is a block-I/O group's caps and counters as telemetry
// samples them.
func ioGroupUsage(g *iolimit.Group) (telemetry.IOGroup, error) {
	u, err := g.Usage()
	if err != nil {
		return telemetry.IOGroup{}, err
	}
	caps := map[results.IOCapKind]uint64{}
	for k, v := range map[results.IOCapKind]int64{
		results.IOCapReadIOPS: g.Limits.ReadIOPS, results.IOCapWriteIOPS: g.Limits.WriteIOPS,
		results.IOCapReadBPS: g.Limits.ReadBPS, results.IOCapWriteBPS: g.Limits.WriteBPS,
	} {
		if v > 0 {
			caps[k] = uint64(v)
		}
	}
	out := telemetry.IOGroup{Caps: caps, Devices: make(map[string]telemetry.IOServed, len(u.Devices)),
		PressureSome: u.Pressure.Some, PressureFull: u.Pressure.Full, HasPressure: u.HasPressure}
	for dev, s := range u.Devices {
		out.Devices[dev] = telemetry.IOServed{ReadIOs: s.ReadIOs, WriteIOs: s.WriteIOs, ReadBytes: s.ReadBytes, WriteBytes: s.WriteBytes}
	}
	return out, nil
}

// storageLimit is a cgroup's caps as the results record them.
func storageLimit(g *iolimit.Group) *results.StorageLimit {
	return limitRecord(g.Limits, "cgroup "+g.Version)
}

// limitRecord is limits as the results record and describe them, applied
// through mechanism.
func limitRecord(l iolimit.Limits, mechanism string) *results.StorageLimit {
	return &results.StorageLimit{LimitsConfig: results.LimitsConfig(l), Mechanism: mechanism}
}

// recordLimit marks the run's targets that a limit capped, so that every
// place naming their storage names the limit with it. capped says which.
func recordLimit(dir *results.Dir, limit *results.StorageLimit, capped func(results.TargetInfo) bool) error {
	if limit == nil {
		return nil
	}
	return dir.UpdateRun(func(r *results.Run) {
		for i, t := range r.Environment.Targets {
			if capped(t) {
				r.Environment.Targets[i].Limit = limit
			}
		}
	})
}
