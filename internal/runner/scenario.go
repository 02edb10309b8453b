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

// Backups asks a run for backup and restore cycles instead of user steps.
type Backups struct {
	Cycles   int           `json:"cycles"`
	Restore  bool          `json:"restore"`
	Interval time.Duration `json:"interval"`
	// Users keep the workload running during each backup; 0 backs up an idle database.
	Users int `json:"users"`
}

// Noisy asks a run for the noisy-neighbour study instead of user steps.
type Noisy struct {
	Tenants       int           `json:"tenants"`
	BackupTenants int           `json:"backup_tenants"`
	Interval      time.Duration `json:"interval"`
	Cycles        int           `json:"cycles"`
	Users         int           `json:"users"`
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

// runBackups runs the backup scenario on a prepared instance.
func runBackups(ctx context.Context, p Plan, bp Backups, env Env, dir *results.Dir, pl engine.Placement, inst engine.Instance, first int) ([]results.Step, error) {
	dest := pl.Backup
	if dest == nil {
		dest = pl.Data
	}
	if dest == nil {
		return nil, fmt.Errorf("backups need a backup target (or a data target)")
	}
	d, err := dest.Sub("backups-" + inst.Info().Engine)
	if err != nil {
		return nil, err
	}
	b := &scenario.Backups{
		Tenant:    scenario.Tenant{Name: "db", Instance: inst, Workload: p.Workload, Users: bp.Users},
		Dest:      d,
		Cycles:    bp.Cycles,
		Restore:   bp.Restore,
		Interval:  bp.Interval,
		Recording: recording(p, env, dir, first, placementWith(pl, dest), inst),
	}
	return b.Run(ctx)
}

// recording is where a scenario writes, sampling the placement's disks and
// the instance's processes; telemetry that cannot start is a warning.
func recording(p Plan, env Env, dir *results.Dir, first int, pl engine.Placement, inst engine.Instance) scenario.Recording {
	rec := scenario.Recording{Tick: p.Tick, Dir: dir, FirstIndex: first, Now: env.Now, Log: env.Out, Live: env.Live}
	sampler, err := newSampler(env, pl, inst)
	if err != nil {
		_ = dir.UpdateRun(func(r *results.Run) { r.Warnings = append(r.Warnings, "telemetry off: "+err.Error()) })
	}
	if sampler != nil {
		rec.Sampler = sampler
	}
	return rec
}

func placementWith(pl engine.Placement, backup *target.Target) engine.Placement {
	pl.Backup = backup
	return pl
}

// runNoisy starts one managed instance per tenant on the data target,
// prepares each, runs the noisy-neighbour phases, checks every tenant and
// stops them all, whatever happens.
func runNoisy(ctx context.Context, p Plan, n Noisy, env Env, dir *results.Dir, pl engine.Placement, first int) (steps []results.Step, checks []results.Check, err error) {
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
		opts := p.EngineOptions
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
		RampUp: p.RampUp, Quiet: p.Step, BackupDest: func(i int) string { return dests[i] }, Barrier: p.Barrier,
		Recording: recording(p, env, dir, first, pl, multiProcess(tenants[0].Instance, pids)),
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
