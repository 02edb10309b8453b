package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"dbio/internal/execx"
	"dbio/internal/fioformat"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/target"
)

// place is where a plan's points run: this machine, or the hosts of a
// fleet reached over ssh, where every point runs on all of them at once
// through fio's client here and each host's fio server. The runner
// prepares the targets and runs each point the same way at either place
// (run.go, target.go); a place says only what differs: how its machines
// are reached and which are still in the run, how fio is run there, and
// how its machines' parts of a point add up to the point's figures.
type place interface {
	// reach finds the place's machines, checks fio there against fio's
	// version here, and records what it found in run.json.
	reach(ctx context.Context, version string) error
	// sites are the machines still in the run, in the order given.
	sites() []*site
	// goesOnWithout says whether the run goes on without s, whose target
	// failed to be prepared with err (a host that cannot be reached any
	// more), having taken it out of the run; false fails the run.
	goesOnWithout(ctx context.Context, s *site, err error) bool
	// ready is called once every target is prepared, before the points.
	ready(ctx context.Context) error
	// run runs fio, through fio, for a point whose job files are written
	// in its sites' directories under stepDir, and leaves fio's json+
	// report in stepDir's OutputFileName and each site's logs in its
	// directory. fileErr is what went wrong filing them.
	run(ctx context.Context, stepDir string, pt results.FioPlan, fio func(args []string) ([]byte, error)) (runErr, fileErr error)
	// lost takes out of the run the sites that took their part of the point
	// with them (at, when it ended), and names them; the point goes on over
	// the others. err fails the point.
	lost(ctx context.Context, pt results.FioPlan, out *fioformat.Output, at time.Time) (gone []string, err error)
	// add puts the sites' parts of a completed point together into its
	// figures and series, and says it in lines for the terminal.
	add(res *results.FioPoint, parts []part) (lines []string, err error)
	// end ends the run there, whatever happened: after the last point, or
	// once the run failed or stopped.
	end(ctx context.Context) error
}

// site is one machine a plan's points run on, with its targets.
type site struct {
	// host is the host's name; "" for this machine.
	host string
	// addr is where fio's client reaches the host's fio server, the name
	// it gives the host's part of its report; "" for this machine.
	addr    string
	machine machine
	// paths are the site's targets as the plan names them, each with its
	// path on the site.
	paths map[string]string
	// places are the targets prepared, in the order of the plan's.
	places []placement
	// offset is the site's clock against this machine's (its clock minus
	// this one's), by which its logged seconds are put on this machine's.
	offset time.Duration
}

// on says text of the site: as it is for this machine, and after the
// host's name for a host.
func (s *site) on(text string) string {
	if s.host == "" {
		return text
	}
	return "host " + s.host + ": " + text
}

// fio names fio on the site, for messages.
func (s *site) fio() string { return s.on("fio") }

// dir is the site's directory in a step's: the step's own for this
// machine, hosts/<name> for a host.
func (s *site) dir(stepDir string) string {
	if s.host == "" {
		return stepDir
	}
	return filepath.Join(stepDir, HostsDir, s.host)
}

// placements are the site's prepared targets among targets, in their order.
func (s *site) placements(targets []string) []placement {
	var out []placement
	for _, t := range targets {
		for _, pl := range s.places {
			if pl.Target == t {
				out = append(out, pl)
			}
		}
	}
	return out
}

// part is a site's part of a completed point: its group of fio's report,
// and its measured seconds on this machine's clock.
type part struct {
	site    *site
	group   fioformat.Group
	seconds []fioformat.Second
	dropped int
	// wrapped counts the site's interval histograms fio wrote wrapped
	// (fioformat.HistSample.Wrapped).
	wrapped int
}

// thisMachine is the place of a plan whose targets are all on this
// machine: one site, fio run here.
type thisMachine struct {
	r    *runner
	here *site
}

func (p *thisMachine) reach(context.Context, string) error {
	paths := map[string]string{}
	for _, t := range p.r.plan.Config.Targets {
		paths[t] = t
	}
	p.here = &site{machine: &here{r: p.r, opened: map[string]*target.Target{}, fsTypes: map[string]string{}}, paths: paths}
	return nil
}

func (p *thisMachine) sites() []*site { return []*site{p.here} }

func (p *thisMachine) goesOnWithout(context.Context, *site, error) bool { return false }

func (p *thisMachine) ready(context.Context) error { return nil }

func (p *thisMachine) run(_ context.Context, stepDir string, _ results.FioPlan, fio func([]string) ([]byte, error)) (error, error) {
	args := []string{"--output-format=json+", "--output=" + OutputFileName, JobFileName}
	if p.r.plan.Config.Live == nil && p.r.plan.Config.Precision == nil {
		_, err := fio(args)
		return err, nil
	}
	// A report a second in fio's report file feeds the live line and the
	// precision bound; only the final one is kept, each being as large.
	_, err := fio(append([]string{"--status-interval=1"}, args...))
	return err, keepFinalReport(filepath.Join(stepDir, OutputFileName))
}

// keepFinalReport rewrites fio's report file with its final report only.
func keepFinalReport(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // fio left no report: the point says so
	}
	if err != nil {
		return err
	}
	if kept := fioformat.FinalReport(data); len(kept) < len(data) {
		return results.WriteFileAtomic(path, kept)
	}
	return nil
}

func (p *thisMachine) lost(context.Context, results.FioPlan, *fioformat.Output, time.Time) ([]string, error) {
	return nil, nil
}

// add takes fio's own figures of the point, and its seconds for series.csv.
func (p *thisMachine) add(res *results.FioPoint, parts []part) ([]string, error) {
	g, secs := parts[0].group, parts[0].seconds
	res.FioDirections = g.FioDirections
	res.UsrCPU, res.SysCPU, res.ElapsedS = g.UsrCPU, g.SysCPU, g.ElapsedS
	res.Steady = g.SteadyState
	res.Seconds, res.SecondsDropped = len(secs), parts[0].dropped
	res.IOPSStdev = fioformat.IOPSStdev(secs)
	mixed := Mixed(res.RW)
	for _, s := range secs {
		vals := []results.Sample{
			{Name: "fio_iops", Value: s.IOPS()},
			{Name: "fio_mb_s", Value: s.MBPerSec},
			{Name: "fio_lat_mean_us", Value: s.LatMeanUS},
			{Name: "fio_lat_p99_us", Value: s.LatP99US},
		}
		if mixed {
			vals = append(vals,
				results.Sample{Name: "fio_read_iops", Value: s.ReadIOPS},
				results.Sample{Name: "fio_write_iops", Value: s.WriteIOPS},
				results.Sample{Name: "fio_read_lat_mean_us", Value: s.ReadLatMeanUS},
				results.Sample{Name: "fio_write_lat_mean_us", Value: s.WriteLatMeanUS},
				results.Sample{Name: "fio_read_lat_p99_us", Value: s.ReadLatP99US},
				results.Sample{Name: "fio_write_lat_p99_us", Value: s.WriteLatP99US})
		}
		if err := p.r.sink.AppendSeries(results.SeriesRow{Time: s.Time, Step: res.Name, Phase: "measure", Values: vals}); err != nil {
			return nil, err
		}
	}
	return append([]string{"  " + headline(*res)}, directionLines(*res)...), nil
}

func (p *thisMachine) end(context.Context) error { return nil }

// here is this machine, where a target is prepared with the system's own
// calls and fio run as a program of dbio's.
type here struct {
	r *runner
	// opened are the targets prepared, by path, and the file system
	// behind each.
	opened  map[string]*target.Target
	fsTypes map[string]string
}

func (m *here) workDir(_ context.Context, path string) (string, results.TargetInfo, []string, error) {
	t, err := target.Open(path)
	if err != nil {
		return "", results.TargetInfo{}, nil, err
	}
	info := results.TargetInfo{Role: target.RoleData, Path: t.Path}
	var warnings []string
	if st, err := t.Storage(m.r.plan.Config.SysFS); err == nil {
		info.Storage = st
	} else {
		warnings = append(warnings, fmt.Sprintf("target %s: storage not resolved: %v", t.Path, err))
	}
	work, err := t.Sub(WorkSubdir)
	if err != nil {
		return "", info, nil, err
	}
	// fio opens its files by name: a link planted in the place of one would
	// send its writes somewhere else.
	file := filepath.Join(work, workFile)
	for _, f := range []string{file, partialFile(file), filepath.Join(work, probeFile)} {
		if err := target.CheckFile(f); err != nil {
			return "", info, nil, err
		}
	}
	m.opened[path], m.fsTypes[path] = t, info.Storage.FSType
	return work, info, warnings, nil
}

func (m *here) space(_ context.Context, path, file string) (space, error) {
	free, err := m.opened[path].FreeBytes()
	if err != nil {
		return space{}, err
	}
	sp := space{free: free, fsType: m.fsTypes[path], memory: m.r.plan.Config.MemoryBytes, existing: -1}
	if fi, err := os.Lstat(file); err == nil {
		sp.existing, sp.allocated = fi.Size(), allocatedAt(file)
	}
	return sp, nil
}

func (m *here) tryEngine(ctx context.Context, file, engine string, direct bool) (string, error) {
	res, err := m.r.exec.Run(ctx, execx.Cmd{Name: m.r.fioPath, Args: probeArgs(file, engine, direct), Setsid: true, ParentDeathSignal: syscall.SIGTERM})
	os.Remove(file)
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err == nil {
		if out, perr := fioformat.Parse(bytes.NewReader(res.Stdout)); perr == nil && len(out.Groups) == 1 && out.Groups[0].Error == 0 {
			return "", nil
		}
	}
	return fioComplaint(res.Stderr, res.Stdout), nil
}

func (m *here) remove(_ context.Context, file string) error { return os.Remove(file) }

func (m *here) layout(ctx context.Context, pl placement) error {
	partial := partialFile(pl.File)
	os.Remove(partial)
	cmd := execx.Cmd{Name: m.r.fioPath, Args: layoutArgs(partial, pl.Size, pl.Engine, pl.Direct), Setsid: true, ParentDeathSignal: syscall.SIGTERM}
	if line := m.r.plan.Config.Live; line != nil {
		// Laying out twice the memory takes minutes: fio's report a
		// second says how far it got.
		meter := progress.StartMeter(line.Messages(m.r.out), "laying out", float64(pl.Size)/1e6, "MB", "MB", m.r.now())
		defer meter.Finish()
		cmd.Args = append(cmd.Args, "--status-interval=1")
		cmd.Stdout = &layoutWatch{meter: meter, now: m.r.now}
	}
	res, err := m.r.exec.Run(ctx, cmd)
	if err != nil {
		os.Remove(partial)
		if ctx.Err() != nil {
			return fmt.Errorf("laying out the working file: %w", ctx.Err())
		}
		return fmt.Errorf("laying out the working file %s: %w", partial, err)
	}
	fi, err := os.Stat(partial)
	if err != nil || fi.Size() != pl.Size {
		os.Remove(partial)
		return fmt.Errorf("laying out the working file %s: fio left %v bytes, want %d (fio said: %s)", partial, sizeOf(fi), pl.Size, fioComplaint(res.Stderr, res.Stdout))
	}
	if err := os.Rename(partial, pl.File); err != nil {
		return fmt.Errorf("working file: %w", err)
	}
	return nil
}

// layoutWatch shows the MB fio's layout reports written, as its reports
// come.
type layoutWatch struct {
	meter  *progress.Meter
	now    func() time.Time
	reader fioformat.StatusReader
}

func (w *layoutWatch) Write(p []byte) (int, error) {
	for _, rep := range w.reader.Add(p) {
		var written int64
		for _, g := range rep.Groups {
			if g.Write != nil {
				written += g.Write.Bytes
			}
		}
		w.meter.Update(float64(written)/1e6, float64(written)/1e6, w.now())
	}
	return len(p), nil
}

func (m *here) purge(_ context.Context, file string, size int64) (string, error) {
	return purgeWorkFile(file, size)
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return 0
	}
	return fi.Size()
}
