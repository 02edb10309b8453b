package suite

import (
	"fmt"
	"io"
	"strings"

	"dbio/internal/fleet"
)

// Where a database run whose data target is on hosts runs its users.
const (
	// DriverHost runs dbio on each database host, driving the server it
	// starts there on the host's target: tenants, one per host, released
	// at one instant.
	DriverHost = "host"
	// DriverCoordinator drives the user's server on a host from this
	// machine, over the network, by the engine's DSN.
	DriverCoordinator = "coordinator"
)

// driver validates how a run puts its database on data target dt, and
// returns where its users run: "" for a run of this machine or a disk
// run, else DriverHost or DriverCoordinator. Every problem names the
// suite key that causes it and its fix.
func (v *validator) driver(table string, r RunDef, w WorkloadDef, dt Target, engines []string, log, backup *Target) string {
	switch {
	case r.Driver != "" && r.Driver != DriverHost && r.Driver != DriverCoordinator:
		v.addf(table, "driver", "%q: use %q (dbio on each database host drives its own server) or %q (this dbio drives your server on the host over the network, by the engine's dsn)", r.Driver, DriverHost, DriverCoordinator)
		return ""
	case w.Kind == KindReplay:
		if r.Driver != "" {
			v.addf(table, "driver", "applies to database runs; a replay runs its fio here: drop driver")
		}
		if dt.OnHosts() {
			v.addf(table, "data", "target %s is on other hosts, and a replay plays its capture on this machine: use a target of this machine", dt.Name)
		}
		return ""
	case w.Kind == "disk":
		if r.Driver != "" {
			v.addf(table, "driver", "applies to database runs; a disk run's fio runs on each host of its target: drop driver")
		}
		return ""
	case !dt.OnHosts():
		if r.Driver == DriverCoordinator {
			v.addf(table, "driver", "target %s is on this machine, where dbio drives its server itself: driver = %q is for a data target on a host", dt.Name, DriverCoordinator)
		}
		return ""
	}
	driver := r.Driver
	if driver == "" {
		driver = DriverHost
	}
	hosts := map[string]bool{}
	for _, dir := range dt.Dirs() {
		t, err := fleet.ParseTarget(dir)
		if err != nil || !t.Remote() {
			continue // the target's own problem, reported at the target
		}
		if hosts[t.Host] {
			v.addf(table, "data", "target %s has two paths on host %s: a database run on hosts has one server per host: give each host one path", dt.Name, t.Host)
		}
		hosts[t.Host] = true
	}
	if driver == DriverCoordinator {
		if len(hosts) > 1 {
			v.addf(table, "data", "target %s spreads over %d hosts, and driver = %q drives one server, by the engine's dsn: use a target on that server's host, or driver = %q for a server on each host", dt.Name, len(hosts), DriverCoordinator, DriverHost)
		}
		for _, e := range engines {
			if e != "" && v.dsns[e] == "" {
				v.addf(table, "driver", "%q drives your server on the host by its dsn, and engine %s has none: give engines.%s a dsn (or dsn_env, dsn_file) reaching the server whose data is on %s; dbio does not start a server on a host for a driver elsewhere yet", DriverCoordinator, e, e, strings.Join(dt.Dirs(), ", "))
			}
		}
		return driver
	}
	// dbio on each host runs the workload's own command there, beside the
	// server it starts: what that command refuses on hosts is refused here.
	for _, e := range engines {
		if e != "" && v.dsns[e] != "" {
			v.addf(table, "driver", "engine %s reaches your server by its dsn, and driver = %q starts a server on each host's target: set driver = %q to drive your server from here, or use an engine without dsn", e, DriverHost, DriverCoordinator)
		}
	}
	// A noisy-neighbour run is dbio noisy on each host, its tenants and
	// their backups on that host's target.
	switch {
	case r.Scenario == "noisy-neighbour" && backup != nil:
		v.addf(table, "backup", "on hosts each host's tenants back up into their own directories on its target: drop backup")
	case r.Scenario != "" && r.Scenario != "noisy-neighbour":
		v.addf(table, "scenario", "the %s scenario runs on this machine only so far; on hosts each host runs the workload alone: drop scenario, or use a data target of this machine", r.Scenario)
	}
	if log != nil && !log.OnHosts() {
		v.addf(table, "log", "target %s is on this machine, and each host's server keeps its log with its data there: drop log", log.Name)
	}
	if backup != nil && !backup.OnHosts() {
		v.addf(table, "backup", "target %s is on this machine, and a run on hosts takes no backups: drop backup", backup.Name)
	}
	if w.RampUpUntil != "" {
		v.addf("workloads."+r.Workload, "ramp_until", "each host would end its ramp-up at its own moment, leaving no common window for %s (data %s on hosts): give a fixed ramp_time", table, dt.Name)
	}
	if w.Precision != "" {
		v.addf("workloads."+r.Workload, "precision", "each host would end its measurement at its own moment, leaving no common window for %s (data %s on hosts): give a fixed runtime", table, dt.Name)
	}
	if w.Goal != "" {
		v.addf("workloads."+r.Workload, "goal", "each host would search on its own, leaving no common steps for %s (data %s on hosts): run the search on a target of this machine", table, dt.Name)
	}
	return driver
}

// printHosts says, for each database run on hosts, where its server and
// its users are, so that a dry run shows what runs on which host.
func (p *Plan) printHosts(w io.Writer) {
	first := true
	for _, r := range p.Runs {
		if r.Driver == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "on hosts:")
			first = false
		}
		switch r.Driver {
		case DriverCoordinator:
			fmt.Fprintf(w, "  %s: this dbio drives your %s by its dsn %s over the network; its data is on %s\n", r.Name, r.Engine, r.DSN, strings.Join(r.Data.Dirs(), ", "))
		default:
			var on []string
			for _, dir := range r.Data.Dirs() {
				if t, err := fleet.ParseTarget(dir); err == nil {
					on = append(on, fmt.Sprintf("%s (%s)", t.Host, t.Path))
				}
			}
			fmt.Fprintf(w, "  %s: dbio on %s, each starting %s on its path and driving it there, all released at one instant\n", r.Name, strings.Join(on, ", "), r.Engine)
		}
	}
}
