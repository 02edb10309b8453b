package fio

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"dbio/internal/controlchars"
	"dbio/internal/fleet"
	"dbio/internal/results"
	"dbio/internal/target"
)

// placement is one target's part in a job: its working file and how fio
// may reach it there.
type placement struct {
	// Target is the target as the plan names it.
	Target string
	Label  string
	File   string
	Size   int64
	Engine string
	Direct bool
}

// JobFile renders a point as an fio job file. The file stands on its own:
// `fio --output-format=json+ job.fio` in an empty directory re-runs the point
// exactly, writing the same per-second logs. One section per target; with
// several sections (a drive group) they run at once and fio reports them as
// one group. A value holding a control character is refused: fio reads
// its job file line by line, with no escape for a line break, which in a
// target's path would start an option of its own.
func JobFile(p results.FioPlan, profile string, places []placement) (string, error) {
	texts := []string{p.Name, profile, p.RW, p.SteadyState}
	for _, pl := range places {
		texts = append(texts, pl.Label, pl.File, pl.Engine)
	}
	for _, t := range texts {
		if err := controlchars.Check(t); err != nil {
			return "", fmt.Errorf("fio job file not written: %q %w", t, err)
		}
	}
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line("; dbio fio job: point %q of profile %s", p.Name, profile)
	line("; re-run: fio --output-format=json+ --output=fio.json job.fio")
	line("[global]")
	line("rw=%s", p.RW)
	if Mixed(p.RW) {
		line("rwmixread=%d", p.ReadPct)
	}
	line("bs=%d", p.BS)
	line("iodepth=%d", p.IODepth)
	line("numjobs=%d", p.Jobs)
	if p.Loops > 0 {
		line("loops=%d", p.Loops)
	} else {
		line("time_based=1")
		line("runtime=%d", p.RuntimeS)
	}
	if p.RampS > 0 {
		line("ramp_time=%d", p.RampS)
	}
	if p.RateIOPS > 0 {
		// The point's rate is shared by every job of every target it runs
		// on, in this job file and in the other hosts'.
		line("rate_iops=%s", jobRate(p.RateIOPS, p.Jobs*max(len(p.Targets), 1), p.RW, p.ReadPct))
	}
	if p.SteadyState != "" {
		line("steadystate=%s", p.SteadyState)
		line("steadystate_duration=%d", p.SteadyWindowS)
		if p.SteadyRampS > 0 {
			line("steadystate_ramp_time=%d", p.SteadyRampS)
		}
	}
	// Fresh random offsets for every point, so that one point does not read
	// what the previous one left in a device cache.
	line("randrepeat=0")
	line("group_reporting=1")
	line("unified_rw_reporting=both")
	line("log_avg_msec=1000")
	line("log_hist_msec=1000")
	line("log_unix_epoch=1")
	for _, pl := range places {
		line("")
		line("[%s]", pl.Label)
		line("filename=%s", escapeFilename(pl.File))
		line("ioengine=%s", pl.Engine)
		line("direct=%d", boolInt(pl.Direct && !p.Buffered))
		if p.WriteThrough {
			line("sync=dsync")
		}
		if p.BlockAlign > 0 {
			line("blockalign=%d", p.BlockAlign)
		}
		switch {
		case pl.Size == 0:
			line("; size: chosen when the run starts (see 'dbio disk --help')")
		case p.Split:
			slice := pl.Size / int64(p.Jobs) / p.BS * p.BS
			line("size=%d", slice)
			line("offset_increment=%d", slice)
		default:
			line("size=%d", pl.Size)
		}
		line("write_iops_log=%s", pl.Label)
		line("write_bw_log=%s", pl.Label)
		line("write_lat_log=%s", pl.Label)
		line("write_hist_log=%s", pl.Label)
	}
	return b.String(), nil
}

// jobRate is fio's rate_iops for a total limit over jobs jobs: fio limits
// each job, and a mix per direction ("reads,writes").
func jobRate(total int64, jobs int, rw string, readPct int) string {
	per := func(share float64) int64 {
		if share <= 0 {
			return 0
		}
		return max(1, int64(float64(total)*share/float64(jobs)+0.5))
	}
	if !Mixed(rw) {
		return fmt.Sprint(per(1))
	}
	return fmt.Sprintf("%d,%d", per(float64(readPct)/100), per(float64(100-readPct)/100))
}

// escapeFilename protects the colons fio would read as a list of files.
func escapeFilename(path string) string { return strings.ReplaceAll(path, ":", `\:`) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PreviewJobFile is the job file point i of plan will run, as far as it is
// known before the run: the working file's place in each target, the asked
// ioengine (io_uring by default; the run may fall back), O_DIRECT (a
// filesystem that refuses it is measured buffered), and the size when
// given. On a fleet it is each host's job file, with its host's targets.
func PreviewJobFile(plan Plan, i int) string {
	p := plan.Points[i]
	engine := plan.Config.Engine
	if engine == "" {
		engine = "io_uring"
	}
	labels := TargetLabels(plan.Config.Targets)
	byHost := map[string][]placement{}
	var hosts []string
	for ti, t := range plan.Config.Targets {
		ft, err := fleet.ParseTarget(t)
		if err != nil || !slices.Contains(p.Targets, t) {
			continue
		}
		if _, ok := byHost[ft.Host]; !ok {
			hosts = append(hosts, ft.Host)
		}
		dir := ft.Path
		if !ft.Remote() {
			dir = t // as the run opens it
		}
		byHost[ft.Host] = append(byHost[ft.Host], placement{Label: labels[ti], File: filepath.Join(dir, target.DirName, WorkSubdir, workFile),
			Size: plan.Config.Size, Engine: engine, Direct: true})
	}
	if !plan.Config.Fleet() {
		return previewText(JobFile(p, plan.Profile.Name(), byHost[""]))
	}
	var b strings.Builder
	for i, h := range hosts {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "; host %s: %s/%s/%s\n", h, HostsDir, h, JobFileName)
		b.WriteString(previewText(JobFile(p, plan.Profile.Name(), byHost[h])))
	}
	return b.String()
}

// previewText is a job file as a preview shows it, or why it would not be
// written.
func previewText(job string, err error) string {
	if err != nil {
		return "; " + err.Error() + "\n"
	}
	return job
}
