package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/secret"
	"dbio/internal/units"
)

// The sections that make a report stand on its own as evidence: the
// machine, the storage behind each target, the software and its settings,
// the configuration as resolved, and how the run ended.

// environmentSection describes the machine, targets, versions and engines.
func environmentSection(r *runView, prefix string) *section {
	env := r.Run.Environment
	sec := &section{ID: prefix + "environment", Title: "Environment"}
	host := &keyValues{ID: prefix + "host", Title: "Host"}
	add := func(label, value string) {
		if value != "" {
			host.Pairs = append(host.Pairs, fact{label, value})
		}
	}
	add("hostname", env.Hostname)
	add("operating system", env.OS)
	add("kernel", env.Kernel)
	add("CPU", env.CPUModel)
	if env.CPUs > 0 {
		add("CPUs", strconv.Itoa(env.CPUs))
	}
	if env.MemoryBytes > 0 {
		add("memory", units.FormatBytes(env.MemoryBytes))
	}
	sec.add(host)
	if bg := backgroundFacts(r, prefix); bg != nil {
		sec.add(bg)
	}

	if ts := targetsOf(r.Run); len(ts) > 0 {
		t := &table{ID: prefix + "targets", Title: "Targets", Caption: "Where the run put its files, and the block devices the kernel resolves behind them."}
		t.Columns = []column{{Name: "role"}, {Name: "path"}, {Name: "filesystem"}, {Name: "mounted at"}, {Name: "device"},
			{Name: "physical disks", Wrap: true}, {Name: "free at start", Numeric: true}}
		for _, ti := range ts {
			st := ti.Storage
			var disks []string
			for _, d := range st.Physical {
				disks = append(disks, d.Describe(true))
			}
			dev := st.Device
			if dev == "" {
				dev = "none (" + st.Source + ")"
			}
			t.Rows = append(t.Rows, []cell{textCell(string(ti.Role)), textCell(ti.Path), textCell(st.FSType), textCell(st.MountPoint),
				textCell(dev), textCell(strings.Join(disks, "; ")), {Text: ti.FreeText(), Raw: strconv.FormatUint(ti.FreeBytes, 10)}})
		}
		sec.add(t)
	}
	if len(env.Versions) > 0 {
		kv := &keyValues{ID: prefix + "versions", Title: "Software versions"}
		for _, k := range sortedKeys(env.Versions) {
			kv.Pairs = append(kv.Pairs, fact{k, env.Versions[k]})
		}
		sec.add(kv)
	}
	for i, e := range r.Run.Engines {
		kv := &keyValues{ID: fmt.Sprintf("%sengine-%d", prefix, i+1), Title: "Engine: " + e.Engine + " " + e.Version}
		mode := "external (dbio connected to a server it did not start)"
		if e.Managed {
			mode = "managed by dbio"
		}
		kv.Pairs = append(kv.Pairs, fact{"mode", mode})
		for _, p := range []fact{{"transport", e.Transport}, {"data directory", e.DataDir}, {"log directory", e.LogDir}, {"database", e.Database}} {
			if p.Value != "" {
				kv.Pairs = append(kv.Pairs, p)
			}
		}
		for _, k := range sortedKeys(e.Settings) {
			kv.Pairs = append(kv.Pairs, fact{"setting " + k, e.Settings[k]})
		}
		sec.add(kv)
		if len(e.Notes) > 0 {
			sec.add(&bullets{Items: e.Notes})
		}
	}
	return sec
}

// backgroundFacts is what else used the machine while the database steps
// ran, the figures a comparison of two runs checks for a quiet machine.
func backgroundFacts(r *runView, prefix string) *keyValues {
	bg := analysis.BackgroundOf(r.Recorded)
	if bg.Steps == 0 {
		return nil
	}
	kv := &keyValues{ID: prefix + "background", Title: "Background during the database steps"}
	kv.Pairs = append(kv.Pairs,
		fact{"other processes' CPU", fmt.Sprintf("%s %% of the machine (busy CPU that was neither dbio's nor the server's)", fixed(bg.OthersCPU, 1))},
		fact{"steal", fmt.Sprintf("%s %% (CPU time the hypervisor gave to other guests)", fixed(bg.Steal, 1))})
	if !math.IsNaN(bg.Load) {
		on := ""
		if bg.CPUs > 0 {
			on = " on " + plural(bg.CPUs, "CPU", "CPUs")
		}
		kv.Pairs = append(kv.Pairs, fact{"load average (1 min)", fmt.Sprintf("%s%s (tasks running, waiting for a CPU or for the disk; dbio's and the server's own included)", fixed(bg.Load, 2), on)})
	}
	kv.Pairs = append(kv.Pairs, fact{"read from", plural(bg.Steps, "step's", "steps'") + " telemetry, means over the measured time"})
	return kv
}

// scaleUnit names what a load's scale counts, in its flag's word
// ("warehouses", "tables", "rows"): the dataset's first setting, its
// scale, as the load recorded it; for a run recorded before it did, its
// workload's first setting, which is its scale in every workload's record.
func scaleUnit(ld *results.LoadReport, c results.RunConfig) string {
	name := ""
	switch {
	case ld.Dataset != nil && len(ld.Dataset.Settings) > 0:
		name = ld.Dataset.Settings[0].Flag
	case len(c.Settings) > 0:
		name = c.Settings[0].Name
	}
	if name == "" {
		return "scale units"
	}
	return strings.NewReplacer("-", " ", "_", " ").Replace(name)
}

// scaleText is a scale with its unit: "10 warehouses", "1 warehouse".
func scaleText(n int, unit string) string {
	if n == 1 {
		unit = strings.TrimSuffix(unit, "s")
	}
	return thousands(float64(n)) + " " + unit
}

// configurationSection shows the command, the resolved configuration, the
// load, the consistency checks, and the run's notes and warnings.
func configurationSection(r *runView, prefix string) *section {
	run := r.Run
	sec := &section{ID: prefix + "configuration", Title: "Configuration and outcome"}
	kv := &keyValues{ID: prefix + "run-facts", Title: "Run"}
	kv.Pairs = append(kv.Pairs, fact{"results directory", r.Path}, fact{"run id", run.ID}, fact{"kind", run.Kind}, fact{"status", string(run.Status)})
	if len(run.Command) > 0 {
		// dbio records the command redacted; a results directory written
		// before it did, or by hand, still shows no password.
		kv.Pairs = append(kv.Pairs, fact{"command", shellJoin(secret.RedactArgs(run.Command))})
	}
	kv.Pairs = append(kv.Pairs, fact{"started", stamp(run.Started)})
	if !run.Ended.IsZero() {
		kv.Pairs = append(kv.Pairs, fact{"ended", stamp(run.Ended)}, fact{"duration", run.Ended.Sub(run.Started).Round(time.Second).String()})
	}
	if run.Error != "" {
		kv.Pairs = append(kv.Pairs, fact{"error", run.Error})
	}
	sec.add(kv)
	if pairs := configFacts(run.Config, r.opts.SettingFlag); len(pairs) > 0 {
		sec.add(&keyValues{ID: prefix + "config", Title: "Resolved configuration", Pairs: pairs})
	}
	if ld := run.Load; ld != nil {
		l := &keyValues{ID: prefix + "load", Title: "Initial load"}
		unit := scaleUnit(ld, run.Config)
		if reset := dataReset(ld); reset != "" {
			l.Pairs = append(l.Pairs, fact{"dataset", reset + ": " + scaleText(ld.Scale, unit)})
		} else if ld.Reused {
			l.Pairs = append(l.Pairs, fact{"dataset", "reused the existing dataset (" + scaleText(ld.Scale, unit) + ")" + dataReused(ld)})
		} else {
			l.Pairs = append(l.Pairs, fact{"scale", scaleText(ld.Scale, unit)}, fact{"rows", thousands(float64(ld.Rows))},
				fact{"time", fixed(ld.Seconds, 1) + " s"}, fact{"rows per second", thousands(ld.RowsPerSec)},
				fact{unit + " per minute", quantity(ld.ScalePerMin)},
				fact{"written", units.FormatBytes(uint64(max(ld.BytesWritten, 0))) + " (" + fixed(ld.MBPerSec, 1) + " MB/s)"})
			if k := pristineKept(ld); k != "" {
				l.Pairs = append(l.Pairs, fact{"pristine copy", k})
			}
		}
		sec.add(l)
	}
	if len(run.Checks) > 0 {
		t := &table{ID: prefix + "checks", Title: "Consistency checks"}
		t.Columns = []column{{Name: "condition"}, {Name: "result"}, {Name: "detail", Wrap: true}}
		for _, c := range run.Checks {
			res := cell{Text: "pass", Raw: "pass", Class: "better"}
			switch {
			case c.Skipped:
				res = cell{Text: "skipped", Raw: "skipped"}
			case !c.Passed:
				res = cell{Text: "FAIL", Raw: "fail", Class: "worse"}
			}
			t.Rows = append(t.Rows, []cell{textCell(c.Name), res, textCell(c.Detail)})
		}
		sec.add(t)
	}
	if len(run.Thresholds) > 0 {
		sec.add(thresholdsTable(prefix, run.Thresholds))
	}
	sec.add(fragmentationTables(run, prefix)...)
	var unfinished []string
	for _, s := range r.Steps {
		if s.Status != "completed" {
			line := fmt.Sprintf("step %s: %s", s.Name, s.Status)
			if s.Error != "" {
				line += ": " + s.Error
			}
			unfinished = append(unfinished, line)
		}
		for _, n := range s.Notes {
			unfinished = append(unfinished, fmt.Sprintf("step %s: %s", s.Name, n))
		}
	}
	if len(run.Warnings) > 0 {
		sec.add(&paragraph{Text: "Warnings recorded during the run:", Class: "note"}, &bullets{Items: run.Warnings})
	}
	if len(run.Notes) > 0 {
		sec.add(&paragraph{Text: "Notes recorded during the run:", Class: "note"}, &bullets{Items: run.Notes})
	}
	if len(unfinished) > 0 {
		sec.add(&paragraph{Text: "Steps:", Class: "note"}, &bullets{Items: unfinished})
	}
	return sec
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// shellJoin writes a command line a reader can paste back into a shell.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@%+", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// thresholdsTable is the run's --threshold bounds as judged when it ended.
func thresholdsTable(prefix string, judged []results.ThresholdResult) *table {
	t := &table{ID: prefix + "thresholds", Title: "Thresholds"}
	t.Columns = []column{{Name: "threshold"}, {Name: "result"}, {Name: "measured", Numeric: true}, {Name: "detail", Wrap: true}}
	for _, j := range judged {
		res := cell{Text: "pass", Raw: "pass", Class: "better"}
		if !j.Passed {
			res = cell{Text: "FAIL", Raw: "fail", Class: "worse"}
		}
		measured := textCell("—")
		if j.Measured != nil {
			measured = cell{Text: analysis.ThresholdQuantity(*j.Measured, j.Unit), Raw: strconv.FormatFloat(*j.Measured, 'g', -1, 64)}
		}
		t.Rows = append(t.Rows, []cell{textCell(j.Expr), res, measured, textCell(j.Detail)})
	}
	return t
}
