package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/stats"
)

// Suite is a suite's runs, each resolved into the plan the runner
// executes, with what executing them needs. The suite file is resolved
// elsewhere (cmd/dbio): the runner sees the same typed plans a command's
// flags give it.
type Suite struct {
	// Name names the suite's directory, created under Results.
	Name    string
	Results string
	// Runs are the suite's runs in the order they execute.
	Runs []PlannedRun
	// Expected, when set, is each run's typical time as its dry run
	// gives it (Expect), in Runs' order: each run's header then says the
	// time left in the suite, scaled by how long the runs so far took
	// against what was expected of them.
	Expected []time.Duration
	// Problems are what resolving the runs found wrong (a goal's
	// transaction type the workload lacks): the preflight reports them with
	// its own, before anything is written.
	Problems []error
	// Record is what suite.json keeps as the suite's plan.
	Record any
	// Compare renders a comparison of comparable configurations into out:
	// each set is one configuration's runs (several when the suite
	// repeats its runs), labelled by what it varies.
	Compare func(sets []ComparedSet, out string) error
	// AB writes the A/B table of two configurations' runs to stem.md and
	// stem.json (report.WriteAB); nil writes none.
	AB func(stem string, dirsA, dirsB []string, labelA, labelB string) (results.ABResult, error)
	// Report renders one run's report into its directory; name is the
	// run's, as planned.
	Report func(name, dir string) (string, error)
	// ReportRepeats renders a repeat set's report into its directory.
	ReportRepeats func(dir string) (string, error)
	Command       []string
	// CreateTargets makes the targets that do not exist yet (--create-target).
	CreateTargets bool
}

// PlannedRun is one run of a suite: the plan the runner executes (a
// database run's Plan or a disk run's DiskPlan, without its results
// directory and its targets' locks, which the suite gives it) and what
// places it among the suite's other runs.
type PlannedRun struct {
	Name string
	Kind string
	// Variant labels the crossed values the run takes ("buffer_pool=64MB
	// data=nvme"); empty when the run varies nothing.
	Variant string
	// Config is the run's configuration less its variant: the runs that
	// share it differ only in what they vary, and are compared side by
	// side. Group names their comparison's files ("tpcc-backup").
	Config, Group string
	// Set names the repeat set a repeated run belongs to; Rep is which
	// repetition it is (1-based), 0 for a run that is not repeated.
	Set string
	Rep int

	Plan *Plan
	Disk *DiskPlan
	// Sequential, when set, compares the run's configuration's two
	// variants after each round of repeats (every variant's Rep-th run
	// done) with this design, and skips the configuration's later runs
	// once it has decided; Margin is the difference either way (a
	// fraction) under which the variants count as not different.
	Sequential *stats.Sequential
	Margin     float64
	// Err, when set, is why the run could not be resolved into a plan: it
	// is recorded as failed when its turn comes, and the suite goes on.
	Err error
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
	Dir  string     `json:"dir"`
	Runs []SuiteRun `json:"runs"`
	// RepeatSets are the directories of the repeated runs' sets, one per
	// repeated configuration.
	RepeatSets  []string `json:"repeat_sets,omitempty"`
	Comparisons []string `json:"comparisons,omitempty"`
	// Sequential are the comparisons that added rounds of repeats until
	// decided, each with its looks.
	Sequential []SuiteSequential `json:"sequential,omitempty"`
}

// SuiteSequential is one configuration's sequential comparison: its
// group, the variants compared (A first, in plan order) and what the
// sequential test saw at each look and decided.
type SuiteSequential struct {
	Config string `json:"-"`
	results.SuiteSequential
}

// relativeTo is the outcome as suite.json records it: every directory
// relative to the suite's own (dir), so the suite directory reads the same
// wherever it is moved or copied.
func (o SuiteOutcome) relativeTo(dir string) SuiteOutcome {
	rel := func(p string) string {
		if r, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(r) {
			return r
		}
		return p
	}
	out := SuiteOutcome{Dir: ".", Runs: make([]SuiteRun, len(o.Runs))}
	for i, r := range o.Runs {
		if r.Dir != "" {
			r.Dir = rel(r.Dir)
		}
		out.Runs[i] = r
	}
	for _, p := range o.RepeatSets {
		out.RepeatSets = append(out.RepeatSets, rel(p))
	}
	for _, p := range o.Comparisons {
		out.Comparisons = append(out.Comparisons, rel(p))
	}
	out.Sequential = o.Sequential
	return out
}

// ComparedSet is one configuration of a comparison: its label (the
// variant's values) and its runs' results directories.
type ComparedSet struct {
	Label string
	Dirs  []string
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
	base, err := results.NewDir(s.Results, "suite-"+s.Name, "suite directory", env.Now())
	if err != nil {
		return out, err
	}
	out.Dir = base
	save := func() {
		_ = results.WriteJSON(filepath.Join(base, results.SuiteFile), map[string]any{"plan": s.Record, "outcome": out.relativeTo(base), "command": s.Command})
	}
	save()
	var failed []string
	sets := repeatSets{suite: base, plan: s.Runs, command: s.Command, now: env.Now}
	decided := map[string]bool{}
	var took, expectedTook time.Duration
	for i, r := range s.Runs {
		if ctx.Err() != nil {
			break
		}
		if decided[r.Config] {
			// Its comparison knows already: the run would only narrow it.
			out.Runs = append(out.Runs, SuiteRun{Name: r.Name, Kind: r.Kind, Status: results.StatusSkipped})
			save()
			continue
		}
		left := ""
		if len(s.Expected) == len(s.Runs) {
			d := suiteLeft(s.Expected[i:], func(j int) bool { return decided[s.Runs[i+j].Config] }, took, expectedTook)
			left = fmt.Sprintf(" (about %s left in the suite)", d.Round(time.Second))
		}
		fmt.Fprintf(env.Out, "\n=== suite %s: run %d of %d: %s%s ===\n", s.Name, i+1, len(s.Runs), r.Name, left)
		began := env.Now()
		sr := SuiteRun{Name: r.Name, Kind: r.Kind}
		runBase, err := sets.dirFor(r)
		if err != nil {
			return out, err
		}
		dir, status, err := s.runOne(ctx, r, runBase, env)
		if aerr := sets.add(r, dir, status, err); aerr != nil && err == nil {
			err = aerr
		}
		sr.Dir, sr.Status = dir, status
		if err != nil {
			sr.Error = err.Error()
			failed = append(failed, r.Name)
			fmt.Fprintf(env.Out, "run %s: %s: %v\n", r.Name, status, err)
		}
		if dir != "" && s.Report != nil {
			if p, err := s.Report(r.Name, dir); err == nil {
				fmt.Fprintf(env.Out, "report: %s\n", p)
			}
		}
		if len(s.Expected) == len(s.Runs) && s.Expected[i] > 0 {
			took, expectedTook = took+env.Now().Sub(began), expectedTook+s.Expected[i]
		}
		out.Runs = append(out.Runs, sr)
		if r.Sequential != nil && lookSequential(&out, s.Runs, r, env.Out) {
			decided[r.Config] = true
			sets.decided(r.Config, out.Sequential)
		}
		save()
	}
	out.RepeatSets = sets.finish(ctx)
	for _, dir := range out.RepeatSets {
		if s.ReportRepeats == nil {
			break
		}
		if p, err := s.ReportRepeats(dir); err == nil {
			fmt.Fprintf(env.Out, "repeats: %s\n", p)
		} else {
			fmt.Fprintf(env.Out, "warning: report of repeat set %s: %v\n", dir, err)
		}
	}
	if s.Compare != nil {
		for _, g := range comparableGroups(s.Runs, out.Runs) {
			compared := g.sets()
			if len(compared) < 2 {
				// Repeats of one configuration: the repeat set's own report says what they measured.
				continue
			}
			file := filepath.Join(base, "compare-"+safeName(g.key)+".html")
			if err := s.Compare(compared, file); err != nil {
				fmt.Fprintf(env.Out, "warning: comparison %s: %v\n", g.key, err)
				continue
			}
			out.Comparisons = append(out.Comparisons, file)
			fmt.Fprintf(env.Out, "comparison: %s\n", file)
			if md, err := s.abTable(g, base); err != nil {
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
		return out, fmt.Errorf("%d of %d runs failed: %s", len(failed), len(s.Runs), strings.Join(failed, ", "))
	}
	return out, nil
}

type group struct {
	key  string
	dirs []string
	// variants label each dir's crossed values ("buffer_pool=64MB").
	variants []string
}

// comparableGroups gathers the finished runs that share a configuration
// (a workload definition and scenario), in plan order: those differ only
// in the crossed variants (target, engine, buffer pool) and can be put
// side by side.
func comparableGroups(plan []PlannedRun, runs []SuiteRun) []group {
	byKey := map[string]*group{}
	var order []string
	for i, r := range runs {
		if r.Dir == "" || i >= len(plan) {
			continue
		}
		p := plan[i]
		g, ok := byKey[p.Config]
		if !ok {
			g = &group{key: p.Group}
			byKey[p.Config] = g
			order = append(order, p.Config)
		}
		g.dirs = append(g.dirs, r.Dir)
		g.variants = append(g.variants, p.Variant)
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

// sets are the group's configurations, one per variant, in plan order,
// each with its runs (its repetitions, when the suite repeats).
func (g group) sets() []ComparedSet {
	var out []ComparedSet
	index := map[string]int{}
	for i, v := range g.variants {
		j, ok := index[v]
		if !ok {
			j = len(out)
			index[v] = j
			out = append(out, ComparedSet{Label: v})
		}
		out[j].Dirs = append(out[j].Dirs, g.dirs[i])
	}
	return out
}

// repeatSets put a suite's repeated runs into one repeat set per
// configuration (the run's Set), under the suite's directory, created when
// the first repeat starts.
type repeatSets struct {
	suite   string
	plan    []PlannedRun
	command []string
	now     func() time.Time
	open    map[string]*results.RepeatSetDir
	order   []string
	failed  map[string]error
}

// dirFor is where run r's results directory goes: its repeat set's
// directory when the run is a repeat, else the suite's.
func (rs *repeatSets) dirFor(r PlannedRun) (string, error) {
	if r.Rep == 0 {
		return rs.suite, nil
	}
	if d, ok := rs.open[r.Set]; ok {
		return d.Path, nil
	}
	n := 0
	for _, p := range rs.plan {
		if p.Rep > 0 && p.Set == r.Set {
			n++
		}
	}
	d, err := results.CreateRepeatSet(rs.suite, results.RepeatSet{Name: r.Set, Kind: r.Kind, Label: r.Variant, Command: rs.command, Repeats: n}, rs.now())
	if err != nil {
		return "", err
	}
	if rs.open == nil {
		rs.open, rs.failed = map[string]*results.RepeatSetDir{}, map[string]error{}
	}
	rs.open[r.Set] = d
	rs.order = append(rs.order, r.Set)
	return d.Path, nil
}

// add records a repeat's results directory and how it went in its set.
func (rs *repeatSets) add(r PlannedRun, dir string, status results.Status, runErr error) error {
	d, ok := rs.open[r.Set]
	if r.Rep == 0 || !ok {
		return nil
	}
	if runErr != nil && rs.failed[r.Set] == nil {
		rs.failed[r.Set] = fmt.Errorf("repeat %d: %s: %w", r.Rep, status, runErr)
	}
	if dir == "" {
		return nil
	}
	return d.Add(dir)
}

// decided marks the open sets of a configuration whose comparison has
// decided, with its verdict, so that each says why it ran fewer repeats
// than planned.
func (rs *repeatSets) decided(config string, seqs []SuiteSequential) {
	why := "its comparison decided"
	for _, q := range seqs {
		if q.Config == config {
			why = fmt.Sprintf("its comparison (until_decided) decided %q after %d run(s) a side", q.Verdict, q.RunsPerSide)
		}
	}
	for _, r := range rs.plan {
		if d, ok := rs.open[r.Set]; ok && r.Config == config {
			d.Decided(why)
		}
	}
}

// finish closes every set with how its repeats went, and returns their directories.
func (rs *repeatSets) finish(ctx context.Context) []string {
	var out []string
	for _, name := range rs.order {
		d := rs.open[name]
		err := rs.failed[name]
		if err == nil && len(d.Set().Runs) < d.Set().Repeats && ctx.Err() != nil {
			err = ctx.Err()
		}
		_ = d.Finish(statusOf(ctx, err), err, rs.now())
		out = append(out, d.Path)
	}
	return out
}

// abTable writes the A/B table of a group whose runs take exactly two
// variants (with their repetitions): ab-<key>.md and .json in the suite directory.
func (s Suite) abTable(g group, base string) (string, error) {
	if s.AB == nil {
		return "", nil
	}
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
	res, err := s.AB(stem, side[labels[0]], side[labels[1]], labels[0], labels[1])
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

// runOne executes one run of the suite into base, its targets held by the suite.
func (s Suite) runOne(ctx context.Context, r PlannedRun, base string, env Env) (string, results.Status, error) {
	switch {
	case r.Err != nil:
		return "", results.StatusFailed, r.Err
	case r.Disk != nil:
		p := *r.Disk
		p.TargetsHeld, p.ResultsBase = true, base
		o, err := RunDisk(ctx, p, env)
		if o.Dir == "" && err != nil {
			o.Status = results.StatusFailed
		}
		return o.Dir, o.Status, err
	case r.Plan == nil:
		return "", results.StatusFailed, fmt.Errorf("run %s has no plan", r.Name)
	}
	p := *r.Plan
	p.TargetsHeld, p.ResultsBase = true, base
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

// lookSequential compares r's configuration's two variants once every
// variant has as many finished runs as the other and more than at the
// last look (a round of repeats done), records the look in out, says it,
// and whether the comparison has decided. A run of the configuration that
// failed or has no headline figure ends its looks: the rounds run on.
func lookSequential(out *SuiteOutcome, plan []PlannedRun, r PlannedRun, w io.Writer) bool {
	var labels []string
	values := map[string][]float64{}
	figure := ""
	for i, run := range out.Runs {
		p := plan[i]
		if p.Config != r.Config {
			continue
		}
		if _, ok := values[p.Variant]; !ok {
			labels = append(labels, p.Variant)
			values[p.Variant] = nil
		}
		if run.Dir == "" || run.Status != results.StatusCompleted {
			return false
		}
		l, err := results.Load(run.Dir)
		if err != nil {
			return false
		}
		v, what, ok := analysis.RunHeadline(l)
		if !ok {
			return false
		}
		figure = what
		values[p.Variant] = append(values[p.Variant], v)
	}
	if len(labels) != 2 {
		return false
	}
	a, b := values[labels[0]], values[labels[1]]
	var seq *SuiteSequential
	for i := range out.Sequential {
		if out.Sequential[i].Config == r.Config {
			seq = &out.Sequential[i]
		}
	}
	if seq == nil {
		out.Sequential = append(out.Sequential, SuiteSequential{Config: r.Config, SuiteSequential: results.SuiteSequential{Group: r.Group, A: labels[0], B: labels[1],
			ABSequential: results.ABSequential{Figure: figure, Alpha: r.Sequential.Alpha, MaxPerSide: r.Sequential.MaxPerSide, MarginPct: 100 * r.Margin}}})
		seq = &out.Sequential[len(out.Sequential)-1]
	}
	if len(a) != len(b) || len(a) == 0 || len(a) <= seq.RunsPerSide {
		return false
	}
	decided, err := analysis.LookSequential(*r.Sequential, r.Margin, &seq.ABSequential, a, b)
	if err != nil {
		fmt.Fprintf(w, "sequential %s: %v\n", r.Group, err)
		return false
	}
	fmt.Fprintf(w, "sequential %s: %s, %s against %s, after %d run(s) a side: %s\n", r.Group, figure, labels[1], labels[0], seq.RunsPerSide, seq.Verdict)
	return decided
}

// suiteLeft is the time left of a suite's runs from the one about to
// start: the typical times expected of those not skipped, scaled by what
// the runs so far took against what was expected of them, so that a
// machine slower (or a study quicker) than the estimates shows in what
// is left.
func suiteLeft(expected []time.Duration, skipped func(j int) bool, took, expectedTook time.Duration) time.Duration {
	var left time.Duration
	for j, d := range expected {
		if !skipped(j) {
			left += d
		}
	}
	if expectedTook > 0 && took > 0 {
		left = time.Duration(float64(left) * float64(took) / float64(expectedTook))
	}
	return left
}
