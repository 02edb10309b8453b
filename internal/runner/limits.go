package runner

import (
	"fmt"
	"os"

	"dbio/internal/engine"
	"dbio/internal/iolimit"
	"dbio/internal/target"
)

// limitedPlacement applies storage-class limits to a run: one block-I/O
// cgroup capping the physical disks behind the placement's targets. A server
// engine starts inside it (through Options.Wrap, as its own user); an
// in-process engine (SQLite) means dbio itself joins it for the run. The
// returned release undoes it; the note describes it for run.json.
func limitedPlacement(host iolimit.Host, sys target.SysFS, name string, l iolimit.Limits, pl engine.Placement, caps engine.Capabilities, opts *engine.Options) (release func() error, note string, err error) {
	if l.IsZero() {
		return func() error { return nil }, "", nil
	}
	seen := map[string]bool{}
	var devices []string
	for _, t := range []*target.Target{pl.Data, pl.Log} {
		if t == nil {
			continue
		}
		st, err := t.Storage(sys)
		if err != nil {
			return nil, "", fmt.Errorf("limits on %s: %w", t.Path, err)
		}
		for _, d := range st.Physical {
			if !seen[d.DevNumber] {
				seen[d.DevNumber] = true
				devices = append(devices, d.DevNumber)
			}
		}
	}
	g, err := host.Create(fmt.Sprintf("%s-%d", name, os.Getpid()), devices, l)
	if err != nil {
		return nil, "", fmt.Errorf("--limit %s: %w", l, err)
	}
	note = fmt.Sprintf("storage-class emulation: %s on devices %v through %s cgroup %s", l, devices, g.Version, g.Path)
	if p, ok := iolimit.LookupPreset(l.Preset); ok {
		note += " (preset " + l.Preset + ": " + p.Source + ")"
	}
	if caps.ServerProcess {
		opts.Wrap = g.Wrap
		opts.RunAs = g.AllowUser
		return g.Remove, note, nil
	}
	// The engine runs inside dbio: dbio joins the group, and leaves it when
	// the group is removed (Remove moves its members back to the parent).
	if err := g.AddPID(os.Getpid()); err != nil {
		g.Remove()
		return nil, "", err
	}
	return g.Remove, note + "; the engine runs inside dbio, so dbio's own I/O to these devices is capped too", nil
}
