package runner

import (
	"errors"
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/execx"
	"dbio/internal/memlimit"
	"dbio/internal/results"
	"dbio/internal/telemetry"
	"dbio/internal/units"
)

// cappedMemory caps a managed server's whole memory, its page cache
// included: one memory cgroup the server starts in, through the same
// wrapper that puts it in a storage class's block-I/O cgroup (Options.Wrap,
// Options.RunAs), so that the server, every process it forks and every
// restart of it (a restore) are inside both. The returned release removes
// the group once the server has stopped; record is what the results keep.
// env's samplers read the group's usage every second until release.
func cappedMemory(host memlimit.Host, name string, opts *engine.Options, env *Env) (release func() error, record *results.MemoryLimit, note string, err error) {
	if opts.ServerMemory <= 0 {
		return func() error { return nil }, nil, "", nil
	}
	g, err := host.Create(name, opts.ServerMemory)
	if err != nil {
		return nil, nil, "", fmt.Errorf("--server-memory %s: %w", units.FormatBytes(uint64(opts.ServerMemory)), err)
	}
	opts.Wrap = chainWraps(opts.Wrap, g.Wrap)
	opts.RunAs = chainRunAs(opts.RunAs, g.AllowUser)
	record = &results.MemoryLimit{Bytes: g.Limit, Mechanism: "cgroup " + g.Version, Group: g.Path}
	note = fmt.Sprintf("server memory: capped at %s, page cache included, through %s cgroup %s", units.FormatBytes(uint64(g.Limit)), g.Version, g.Path)
	env.memoryGroup = func() (telemetry.MemoryGroup, error) { return memoryGroupUsage(g) }
	return g.Remove, record, note, nil
}

// memoryGroupUsage is a memory group's usage as telemetry samples it.
func memoryGroupUsage(g *memlimit.Group) (telemetry.MemoryGroup, error) {
	u, err := g.Usage()
	if err != nil {
		return telemetry.MemoryGroup{}, err
	}
	return telemetry.MemoryGroup{Limit: uint64(g.Limit), Usage: u.Current, Cache: u.Cache, Anon: u.Anon,
		LimitHits: u.LimitHits, Refaults: u.Refaults, MajorFaults: u.MajorFaults, OOMKills: u.OOMKills,
		PressureSome: u.PressureSome, PressureFull: u.PressureFull, HasPressure: u.HasPressure}, nil
}

// chainWraps starts a program through outer's wrapper and then inner's;
// each execs the next, so the program keeps the first one's PID.
func chainWraps(outer, inner func(execx.Cmd) execx.Cmd) func(execx.Cmd) execx.Cmd {
	if outer == nil {
		return inner
	}
	return func(c execx.Cmd) execx.Cmd { return outer(inner(c)) }
}

// chainRunAs tells both a and b the user a server will run as.
func chainRunAs(a, b func(uid, gid uint32) error) func(uid, gid uint32) error {
	if a == nil {
		return b
	}
	return func(uid, gid uint32) error { return errors.Join(a(uid, gid), b(uid, gid)) }
}

// memoryProblems are the reasons a server memory cap cannot be applied,
// found before anything is written: an engine that runs inside dbio, a host
// without memory cgroups, or a cap below what the server needs to start
// and serve conns connections with the options given (the engine says how
// much, and the message shows the sum), times servers when several share
// the cap (a noisy-neighbour run's tenants). what names the setting as the
// user wrote it ("--server-memory", "run x: server_memory").
func memoryProblems(what string, e engine.Engine, o engine.Options, conns, servers int, host memlimit.Host) []error {
	if o.ServerMemory <= 0 || e == nil {
		return nil
	}
	capText := units.FormatBytes(uint64(o.ServerMemory))
	if !e.Capabilities().ServerProcess {
		return []error{fmt.Errorf("%s %s: %s runs inside dbio, so there is no server to cap: use a server engine (postgres, mariadb), or drop it and size the engine's cache with the buffer pool", what, capText, e.Name())}
	}
	var out []error
	if err := host.Available(); err != nil {
		out = append(out, fmt.Errorf("%s %s: %w: run dbio as root on such a host, or drop it", what, capText, err))
	}
	if m, ok := e.(engine.MemoryNeeds); ok {
		need, explain := m.MemoryNeed(o, conns)
		who := e.Name()
		if servers > 1 {
			need *= int64(servers)
			explain = fmt.Sprintf("%d servers sharing the cap, each %s", servers, explain)
			who = fmt.Sprintf("%d %s servers", servers, e.Name())
		}
		if need > o.ServerMemory {
			out = append(out, fmt.Errorf("%s %s: %s cannot start and serve %d connections in it: that needs about %s (%s); raise the cap, or lower the buffer pool or the users",
				what, capText, who, conns, units.FormatBytes(uint64(need)), explain))
		}
	}
	return out
}

// tenantsMemoryProblems refuses, before anything is written, a
// noisy-neighbour run whose tenants would not fit in the memory this host
// has available (available; 0 when unknown, then nothing is judged): each
// tenant's server starts with o and serves conns connections, and needs
// what the engine says such a server needs (engine.MemoryNeeds, as
// memoryProblems counts a capped server), so that a buffer pool sized by a
// setting (shared_buffers, innodb_buffer_pool_size) counts as the server
// will size it.
func tenantsMemoryProblems(e engine.Engine, o engine.Options, conns, tenants int, available uint64) []error {
	need, each := tenantMemory(e, o, conns)
	if available == 0 || need <= 0 {
		return nil
	}
	if total := uint64(tenants) * uint64(need); total > available {
		return []error{fmt.Errorf("%d tenants need about %s of memory (each %s) but %s is available: use fewer tenants, or a smaller --buffer-pool or buffer pool setting",
			tenants, units.FormatBytes(total), each, units.FormatBytes(available))}
	}
	return nil
}

// tenantMemory is the memory one tenant takes on this host and how it adds
// up, or 0 when there is nothing to count. An external server (o.DSN) is
// not started here, so its memory is not this host's to count. An engine
// that states no memory need runs inside dbio (SQLite): there is no server,
// only the cache it is told to keep, --buffer-pool, counted when given (its
// own default cache is a few megabytes).
func tenantMemory(e engine.Engine, o engine.Options, conns int) (int64, string) {
	if o.DSN != "" {
		return 0, ""
	}
	if m, ok := e.(engine.MemoryNeeds); ok {
		return m.MemoryNeed(o, conns)
	}
	return o.BufferPool, units.FormatBytes(uint64(max(o.BufferPool, 0))) + " of cache"
}
