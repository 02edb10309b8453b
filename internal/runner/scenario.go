package runner

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"dbio/internal/engine"
	"dbio/internal/results"
	"dbio/internal/scenario"
	"dbio/internal/target"
)

// Backups is a run's body of backup and restore cycles of the database the
// setup prepared, with the workload running meanwhile when Users > 0.
type Backups struct {
	Cycles   int           `json:"cycles"`
	Restore  bool          `json:"restore"`
	Interval time.Duration `json:"interval"`
	// Users keep the workload running during each backup; 0 backs up an idle database.
	Users int `json:"users"`
}

func (b Backups) needs() needs {
	return needs{engine: true, servers: 1, users: []int{b.Users}, steps: b.Cycles, stepTime: b.Interval}
}

func (b Backups) describe(p Setup) string {
	return fmt.Sprintf("%s on %s: %s", p.Workload.Name(), p.Engine.Name(), describeBackups(b))
}

func (b Backups) configure(c *Config) { c.Backups = &b }

// run runs the cycles and records the checks of each restore.
func (b Backups) run(ctx context.Context, ss *session) error {
	steps, err := runBackups(ctx, ss, b)
	ss.out.Steps = steps
	if err != nil {
		return err
	}
	return ss.dir.UpdateRun(func(r *results.Run) {
		for _, s := range steps {
			if s.Backup == nil {
				continue
			}
			for _, c := range s.Backup.Checks {
				c.Name = s.Name + ": " + c.Name
				r.Checks = append(r.Checks, c)
				ss.out.Checks = append(ss.out.Checks, c)
			}
		}
	})
}

// Noisy is a run's body of the noisy-neighbour study: Tenants servers of
// the plan's engine on its data target, each with its workload's database
// and Users users, measured quiet, then while BackupTenants of them back
// up Cycles times, Interval apart.
type Noisy struct {
	Tenants       int           `json:"tenants"`
	BackupTenants int           `json:"backup_tenants"`
	Interval      time.Duration `json:"interval"`
	Cycles        int           `json:"cycles"`
	Users         int           `json:"users"`
	// RampUp is each phase's ramp-up, Quiet the quiet baseline's
	// measurement (the interference lasts as long as the backups, and at
	// least Quiet); run.json records them as the run's timing.
	RampUp time.Duration `json:"-"`
	Quiet  time.Duration `json:"-"`
}

// needs: each tenant's own server, started by the study itself in a
// directory of its own on the data target.
func (n Noisy) needs() needs {
	out := needs{servers: n.Tenants, users: []int{n.Users}, steps: 2, stepTime: n.RampUp + n.Quiet}
	for i := 1; i <= n.Tenants; i++ {
		out.subdirs = append(out.subdirs, tenantSubdir(i))
	}
	return out
}

func (n Noisy) describe(p Setup) string {
	return fmt.Sprintf("%s on %s: %s", p.Workload.Name(), p.Engine.Name(), describeNoisy(n))
}

func (n Noisy) configure(c *Config) { c.Noisy = &n }

// run starts and prepares the tenants, runs the study and checks every
// tenant; the servers share the setup's memory cap.
func (n Noisy) run(ctx context.Context, ss *session) error {
	steps, checks, err := runNoisy(ctx, ss, n)
	ss.out.Steps, ss.out.Checks = steps, checks
	if uerr := ss.dir.UpdateRun(func(r *results.Run) {
		r.Checks = checks
		for i := range r.Engines {
			r.Engines[i].MemoryLimit = ss.memory // the tenants share the one cap
		}
	}); err == nil {
		err = uerr
	}
	return err
}

// describeBackups says what a backup run does, for the plan line.
func describeBackups(b Backups) string {
	what := "backup"
	if b.Restore {
		what = "backup and restore"
	}
	load := "an idle database"
	if b.Users > 0 {
		load = fmt.Sprintf("the workload running at %s", count(b.Users, "user"))
	}
	s := fmt.Sprintf("%s of %s after the load", count(b.Cycles, what+" cycle"), load)
	if b.Cycles > 1 {
		s += fmt.Sprintf(", %s apart", b.Interval)
	}
	return s
}

// describeNoisy says what a noisy-neighbour run does, for the plan line.
func describeNoisy(n Noisy) string {
	working := n.Tenants - n.BackupTenants
	verb := "back up"
	if n.BackupTenants == 1 {
		verb = "backs up"
	}
	s := fmt.Sprintf("%s at %s each, the %d working ones measured quiet, then while %s %s %s",
		count(n.Tenants, "tenant"), count(n.Users, "user"), working, count(n.BackupTenants, "neighbour"), verb, count(n.Cycles, "time"))
	if n.Cycles > 1 {
		s += fmt.Sprintf(", %s apart", n.Interval)
	}
	return s
}

// count is n and the noun, plural but for one.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// checkTenantsFit refuses a noisy-neighbour plan without tenants, or whose
// tenants' databases would not fit on the data target. Their memory is
// judged by preflight (tenantsMemoryProblems), before anything is written.
func checkTenantsFit(n Noisy, spacePerTenant uint64, data *target.Target) error {
	if n.Tenants < 1 {
		return fmt.Errorf("noisy neighbour needs at least one tenant")
	}
	if data != nil && spacePerTenant > 0 {
		need := uint64(n.Tenants) * spacePerTenant
		if n.BackupTenants > 0 {
			need += uint64(n.BackupTenants) * spacePerTenant
		}
		if err := data.EnsureSpace(need, fmt.Sprintf("%d tenants and their backups", n.Tenants)); err != nil {
			return err
		}
	}
	return nil
}

// memAvailable reads MemAvailable from /proc/meminfo under procRoot (0 when unknown).
func memAvailable(procRoot string) uint64 {
	f, err := os.Open(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil || kb > math.MaxUint64/1024 {
				return 0 // a figure no machine has: unknown rather than wrapped
			}
			return kb * 1024
		}
	}
	return 0
}

// runBackups runs the backup scenario on the setup's prepared instance.
func runBackups(ctx context.Context, ss *session, bp Backups) ([]results.Step, error) {
	dest := ss.pl.Backup
	if dest == nil {
		dest = ss.pl.Data
	}
	if dest == nil {
		return nil, fmt.Errorf("backups need a backup target (or a data target)")
	}
	d, err := dest.Sub("backups-" + ss.inst.Info().Engine)
	if err != nil {
		return nil, err
	}
	b := &scenario.Backups{
		Tenant:    scenario.Tenant{Name: "db", Instance: ss.inst, Workload: ss.Workload, Users: bp.Users},
		Dest:      d,
		Cycles:    bp.Cycles,
		Restore:   bp.Restore,
		Interval:  bp.Interval,
		Recording: ss.recording(placementWith(ss.pl, dest), ss.inst),
	}
	return b.Run(ctx)
}

func placementWith(pl engine.Placement, backup *target.Target) engine.Placement {
	pl.Backup = backup
	return pl
}

// runNoisy starts one managed instance per tenant on the data target,
// prepares each, runs the noisy-neighbour phases, checks every tenant and
// stops them all, whatever happens.
func runNoisy(ctx context.Context, ss *session, n Noisy) (steps []results.Step, checks []results.Check, err error) {
	p, env, dir, pl := ss.Setup, ss.env, ss.dir, ss.pl
	if err := checkTenantsFit(n, p.SpaceNeeded, pl.Data); err != nil {
		return nil, nil, err
	}
	var tenants []scenario.Tenant
	var dests []string
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		for _, t := range tenants {
			if serr := t.Instance.Stop(stopCtx); serr != nil {
				fmt.Fprintf(env.Out, "warning: stopping %s: %v\n", t.Name, serr)
				if err == nil {
					err = serr
				}
			}
		}
	}()
	var pids []func() []int
	for i := 1; i <= n.Tenants; i++ {
		name := fmt.Sprintf("t%d", i)
		// Each tenant's target is a marked directory of dbio's own, so that
		// nothing there is taken for dbio's that dbio did not make.
		root, err := pl.Data.Sub(tenantSubdir(i))
		if err != nil {
			return nil, nil, err
		}
		tt, err := target.Open(root)
		if err != nil {
			return nil, nil, err
		}
		tpl := engine.Placement{Data: tt, Backup: pl.Backup}
		opts := ss.opts
		opts.LogDir = filepath.Join(dir.Path, "tenant-"+strconv.Itoa(i))
		if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(env.Out, "starting tenant %s (%s)\n", name, p.Engine.Name())
		inst, err := p.Engine.Start(ctx, tpl, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("start tenant %s: %w", name, err)
		}
		tenants = append(tenants, scenario.Tenant{Name: name, Instance: inst, Workload: p.Workload, Users: n.Users})
		info := inst.Info()
		info.Database = name + ": " + info.Database
		_ = dir.UpdateRun(func(r *results.Run) {
			r.Engines = append(r.Engines, info)
			r.Environment.Versions[info.Engine] = info.Version
		})
		fmt.Fprintf(env.Out, "preparing %s on tenant %s\n", p.Workload.Name(), name)
		if _, err := p.Workload.Prepare(ctx, inst, env.Out); err != nil {
			return nil, nil, fmt.Errorf("prepare tenant %s: %w", name, err)
		}
		bt := tpl.Backup
		if bt == nil {
			bt = tt
		}
		d, err := bt.Sub("backups-" + name)
		if err != nil {
			return nil, nil, err
		}
		dests = append(dests, d)
		if ps, ok := inst.(engine.Processes); ok {
			pids = append(pids, ps.PIDs)
		}
	}
	// One sampler for the shared storage and every tenant's server processes.
	nz := &scenario.Noisy{
		Tenants: tenants, BackupTenants: n.BackupTenants, Interval: n.Interval, Cycles: n.Cycles,
		RampUp: n.RampUp, Quiet: n.Quiet, BackupDest: func(i int) string { return dests[i] }, Barrier: p.Barrier,
		Recording: ss.recording(pl, multiProcess(tenants[0].Instance, pids)),
	}
	steps, err = nz.Run(ctx)
	if err != nil || p.SkipChecks {
		return steps, nil, err
	}
	for _, t := range tenants {
		cs, cerr := p.Workload.Check(ctx, t.Instance)
		for _, c := range cs {
			checks = append(checks, results.Check{Name: t.Name + " " + c.Name, Passed: c.Passed, Detail: c.Detail})
		}
		if cerr != nil {
			return steps, checks, fmt.Errorf("consistency check of %s: %w", t.Name, cerr)
		}
	}
	return steps, checks, nil
}

// tenantSubdir is tenant i's directory in dbio's directory on the data target.
func tenantSubdir(i int) string { return "tenant-" + strconv.Itoa(i) }

// multiProcess presents every tenant's server processes as one instance's, for the sampler.
func multiProcess(inst engine.Instance, pids []func() []int) engine.Instance {
	if len(pids) == 0 {
		return inst
	}
	return tenantsProcs{Instance: inst, pids: pids}
}

type tenantsProcs struct {
	engine.Instance
	pids []func() []int
}

func (t tenantsProcs) PIDs() []int {
	var out []int
	for _, f := range t.pids {
		out = append(out, f()...)
	}
	return out
}
