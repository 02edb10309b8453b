package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/spf13/pflag"

	"dbio/internal/fleet"
	"dbio/internal/remote"
	"dbio/internal/runner"
	"dbio/internal/suite"
)

// startBarrierFlag is the hidden flag by which dbio runs as a tenant of a
// coordinator on another machine: before each step (the first once it has
// loaded) it says it is ready, and starts the step at the instant the
// coordinator sends on its input; its input closing ends the run.
const startBarrierFlag = "start-barrier"

// tenantFlags are a workload command's flags for running on several hosts
// at once.
type tenantFlags struct {
	registered bool
	hosts      []string
	sshConfig  string
	barrier    bool
	// driver is where the users of a run on hosts run: suite.DriverHost or
	// suite.DriverCoordinator.
	driver string
	// fleet are the hosts as a suite's [[host]] tables give them, used
	// instead of --host when set.
	fleet []fleet.Host
	// command is the command each host's dbio runs, when not the
	// workload's own (noisy for the noisy-neighbour scenario).
	command string
	// nodeExporter is where the server host's node exporter is, with
	// --driver coordinator: a [[host]] table's node_exporter.
	nodeExporter string
}

func (f *tenantFlags) register(fs *pflag.FlagSet) {
	f.registered = true
	fs.StringArrayVar(&f.hosts, "host", nil, "a host targets may be on, NAME=[user@]ADDRESS or an ssh_config alias (repeat per host); then --target NAME:/path runs the workload there, dbio on every host at once, each on its own server (see docs/fleet.md)")
	fs.StringVar(&f.sshConfig, "ssh-config", "", "ssh_config file for reaching the hosts (ssh -F); default: your own ssh configuration, keys and agent")
	fs.StringVar(&f.driver, "driver", suite.DriverHost, "with --target NAME:/path, where the users run: host (dbio on each database host drives the server it starts there) or coordinator (this dbio drives your server on the host over the network, by --dsn)")
	fs.StringVar(&f.nodeExporter, "node-exporter", "", "with --driver coordinator: the server host's Prometheus node exporter, read once a second for its CPU and disks: ADDRESS[:PORT], :PORT, a URL, or off (default: the host's address, port 9100)")
	fs.BoolVar(&f.barrier, startBarrierFlag, false, "run as a tenant of a run on several hosts: before each step, wait at the start barrier for the instant read on standard input, and stop when it closes")
	_ = fs.MarkHidden(startBarrierFlag)
}

// onHosts says whether the targets put the run on hosts.
func (f workloadFlags) onHosts() bool {
	if !f.tenants.registered {
		return false
	}
	for _, t := range f.run.targets {
		if ft, err := fleet.ParseTarget(t); err != nil || ft.Remote() {
			return true // a malformed host target is reported as such
		}
	}
	return false
}

// notForwarded are the flags a tenant's dbio is not given as typed: the
// runner gives it its own target, results directory and name, and the
// hosts, the repeat and the live figures are the coordinator's.
var notForwarded = map[string]bool{
	"target": true, "host": true, "ssh-config": true, "results": true, "name": true,
	"metrics-addr": true, "repeat": true, "driver": true, startBarrierFlag: true, "node-exporter": true,
	// The coordinator judges, labels and remembers the fleet's run.
	"threshold": true, "junit": true, "label": true, "history": true,
}

// forwardedFlags are the flags the user gave, as each host's dbio takes
// them, under their current names.
func forwardedFlags(fs *pflag.FlagSet) []string {
	var out []string
	// Changed, not Visit's set flags: a flag given by its old name counts
	// as its new name (resolveAliases), which was never set itself.
	fs.VisitAll(func(fl *pflag.Flag) {
		if _, old := fl.Annotations[aliasOf]; old || !fl.Changed || notForwarded[fl.Name] {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+fl.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+fl.Name+"="+fl.Value.String())
	})
	return out
}

// coordinatorDrives says the run's users run here, driving a server on a
// host by --dsn (--driver coordinator).
func (f workloadFlags) coordinatorDrives() bool {
	return f.tenants.registered && f.tenants.driver == suite.DriverCoordinator
}

// givenHosts are the hosts of a run on hosts: a suite's, or --host's.
func (f tenantFlags) givenHosts() ([]fleet.Host, []error) {
	if f.fleet != nil {
		return f.fleet, nil
	}
	var errs []error
	// Checked here, before anything is written, as dbio disk checks it:
	// ssh would only find it missing once the run had begun.
	errs = append(errs, sshConfigFlagProblems(f.sshConfig)...)
	var hosts []fleet.Host
	for _, s := range f.hosts {
		h, err := fleet.ParseHostFlag(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h.SSHConfig = f.sshConfig
		hosts = append(hosts, h)
	}
	return hosts, errs
}

// tenantsPlan turns a workload plan whose targets are on hosts into a run
// of tenants: dbio on each host, with the same flags, on that host's
// target; or, with --driver coordinator, into this dbio's run on the
// server --dsn reaches on the target's host.
func tenantsPlan(app *App, f workloadFlags, plan runner.Plan) (runner.Plan, error) {
	hosts, errs := f.tenants.givenHosts()
	targets, terrs := fleet.ResolveTargets(hosts, f.run.targets)
	errs = append(errs, terrs...)
	errs = append(errs, fleet.SetProblems(hosts)...)
	switch f.tenants.driver {
	case suite.DriverCoordinator:
		return coordinatorPlan(app, f, hosts, targets, errs, plan)
	case suite.DriverHost:
	default:
		errs = append(errs, fmt.Errorf("--driver %q: use %s (dbio on each database host drives its own server) or %s (this dbio drives your server on the host by --dsn)", f.tenants.driver, suite.DriverHost, suite.DriverCoordinator))
	}
	seen := map[string]bool{}
	var tenants []runner.TenantHost
	for _, t := range targets {
		switch {
		case !t.Remote():
			errs = append(errs, fmt.Errorf("--target %s is on this machine: in a run on hosts every target is on a host; to run a tenant here too, name this machine as a host (--host me=localhost, --target me:%s)", t, t.Path))
		case seen[t.Host]:
			errs = append(errs, fmt.Errorf("--target %s: host %s has a target already: a run on hosts has one tenant per host", t, t.Host))
		default:
			seen[t.Host] = true
			for _, h := range hosts {
				if h.Name == t.Host {
					tenants = append(tenants, runner.TenantHost{Host: h, Target: t.Path})
				}
			}
		}
	}
	refuse := func(flag, why string) {
		if f.run.flags.Changed(flag) {
			errs = append(errs, fmt.Errorf("--%s: %s", flag, why))
		}
	}
	refuse("log-target", "not on hosts yet: each host's server keeps its log with its data")
	refuse("node-exporter", "each host's dbio samples its own host: drop --node-exporter, or drive your server on a host from here with --driver coordinator, whose host's exporter it sets")
	refuse("dsn", "a run on hosts starts a managed server on each host's target: drop --dsn, or drive your server from here with --driver coordinator")
	refuse("dsn-file", "a run on hosts starts a managed server on each host's target: drop --dsn-file, or drive your server from here with --driver coordinator")
	refuse("ramp-until", "each host would end its ramp-up at its own steady state, leaving no common window: give a fixed --ramp-time")
	refuse("goal", "each host would search on its own, leaving no common steps: run the search on one host")
	refuse("precision", "each host would end its measurement when its own figures are precise, leaving no common window: give a fixed --runtime")
	refuse(startBarrierFlag, "is how a coordinator runs dbio on a host; the hosts of this run are named with --target NAME:/path")
	if f.repeat > 1 {
		errs = append(errs, errors.New("--repeat: not on hosts yet: run the fleet run again"))
	}
	if len(errs) > 0 {
		return runner.Plan{}, usageErrors(errs)
	}
	bin, err := ownProgram()
	if err != nil {
		return runner.Plan{}, err
	}
	forwarded := forwardedFlags(f.run.flags)
	workload, command := f.def.Name, f.def.Name
	if f.tenants.command != "" {
		command = f.tenants.command
	}
	plan.Body = runner.Tenants{
		Shell: remote.Shell{Shell: fleet.Shell{Exec: app.Exec}}, Binary: bin, Hosts: tenants, Workload: workload, Each: plan.Body, CreateTargets: f.run.createTarget,
		Args: func(h runner.TenantHost, results, name string) []string {
			args := append([]string{command}, forwarded...)
			return append(args, "--target", h.Target, "--results", results, "--name", name, "--"+startBarrierFlag, "--history", historyOff)
		},
	}
	plan.DataPath, plan.LogPath, plan.CreateTargets = "", "", false
	return plan, nil
}

// ownProgram is dbio's own program, as copied to the hosts, read and
// hashed once per process: a suite plans every run on hosts before the
// first starts, and each would read the whole program again.
var ownProgram = sync.OnceValues(func() (remote.Binary, error) {
	exe, err := os.Executable()
	if err != nil {
		return remote.Binary{}, fmt.Errorf("finding dbio's own program to copy to the hosts: %w", err)
	}
	return remote.ReadBinary(exe)
})

// coordinatorPlan is a run whose one target is on a host, driven from
// here over the network: the server there is the user's, reached by
// --dsn, and the target says where its data is (recorded, not touched;
// the disks behind it are read from the host's node exporter with its
// CPU). dbio does not start a server on a host for a driver elsewhere.
func coordinatorPlan(app *App, f workloadFlags, hosts []fleet.Host, targets []fleet.Target, errs []error, plan runner.Plan) (runner.Plan, error) {
	if len(targets) > 1 {
		errs = append(errs, fmt.Errorf("--target: %d targets, and --driver coordinator drives one server, by --dsn: give the one target on that server's host", len(targets)))
	}
	for _, t := range targets {
		if !t.Remote() {
			errs = append(errs, fmt.Errorf("--target %s is on this machine, where dbio drives its server itself: --driver coordinator is for a target on a host (--target NAME:/path)", t))
		}
	}
	if plan.EngineOptions.DSN == "" {
		errs = append(errs, errors.New("--driver coordinator drives your server on the host over the network: give its --dsn (or --dsn-file); dbio does not start a server on a host for a driver elsewhere yet"))
	}
	if f.tenants.barrier {
		errs = append(errs, fmt.Errorf("--%s: is how a coordinator runs dbio on a host, and --driver coordinator runs none", startBarrierFlag))
	}
	if f.run.flags.Changed("node-exporter") {
		for i := range hosts {
			if len(targets) == 1 && hosts[i].Name == targets[0].Host {
				hosts[i].NodeExporter = f.tenants.nodeExporter
				for _, err := range hosts[i].Problems() {
					errs = append(errs, fmt.Errorf("--node-exporter: %w", err))
				}
			}
		}
	}
	if len(errs) > 0 {
		return runner.Plan{}, usageErrors(errs)
	}
	if len(targets) == 1 {
		plan.ServerHost = serverHost(app, hosts, targets[0])
	}
	return plan, nil
}

// serverHost is the host of a server driven from here by its DSN, whose
// data is at target: its node exporter is read during the run. Nil when no
// host of hosts is the target's.
func serverHost(app *App, hosts []fleet.Host, target fleet.Target) *runner.ServerHost {
	for _, h := range hosts {
		if h.Name == target.Host {
			return &runner.ServerHost{Host: h, Target: target.Path, Shell: fleet.Shell{Exec: app.Exec}}
		}
	}
	return nil
}

// tenantContext is the context of a run as a tenant (--start-barrier): it
// ends when the coordinator's connection closes; plan gets the barrier,
// which its runner waits at before each step.
func tenantContext(ctx context.Context, app *App, f workloadFlags) (context.Context, func(), func(*runner.Plan), error) {
	if !f.tenants.barrier {
		return ctx, func() {}, func(*runner.Plan) {}, nil
	}
	if app.Stdin == nil {
		return ctx, nil, nil, usagef("--%s: dbio reads the start instant on its standard input, and has none", startBarrierFlag)
	}
	b := &remote.Barrier{In: app.Stdin, Out: app.Stdout, Now: app.Now}
	ctx, cancel := b.Watch(ctx)
	return ctx, cancel, func(p *runner.Plan) { p.Barrier = b.Wait }, nil
}

// sshConfigFlagProblems is why --ssh-config cannot be given to ssh -F, for
// every command that reaches hosts (none when the flag is not set).
func sshConfigFlagProblems(path string) []error {
	if path == "" {
		return nil
	}
	if err := fleet.SSHConfigProblem(path); err != nil {
		return []error{fmt.Errorf("--ssh-config %w", err)}
	}
	return nil
}
