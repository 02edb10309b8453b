package report

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// A comparison of repeats sets configurations side by side the way a
// comparison of runs does, but each configuration is a set of repeats: every
// figure is the median over its repeats with its 95 % interval and spread,
// and each difference from A carries its verdict (analysis.CompareRepeated):
// significant, not significant, within the noise between repeats, or too few
// repeats to tell. Nothing is called better or worse unless it is significant.

// Set is one configuration's repeats in a comparison.
type Set struct {
	// Label names the configuration.
	Label string
	// Dir is the repeat set's directory; empty for runs given one by one.
	Dir  string
	Runs []*results.Loaded
}

// LoadSet reads a repeat set's directory, or a results directory as a set
// of one run.
func LoadSet(dir string) (Set, error) {
	if !results.IsRepeatSet(dir) {
		l, err := results.Load(dir)
		if err != nil {
			return Set{}, err
		}
		return Set{Label: runName(newRunView(l)), Runs: []*results.Loaded{l}}, nil
	}
	set, runs, err := results.LoadRepeatSet(dir)
	if err != nil {
		return Set{}, err
	}
	label := set.Label
	if label == "" {
		label = set.Name
	}
	return Set{Label: label, Dir: dir, Runs: runs}, nil
}

// LoadABStudy reads the A/B study in dir (what dbio ab writes) as its two
// configurations: side A's runs, then side B's, named as the study named them.
func LoadABStudy(dir string) ([]Set, error) {
	study, err := results.ReadABStudy(dir)
	if err != nil {
		return nil, err
	}
	var sets []Set
	for _, side := range []struct {
		label string
		runs  []string
	}{{study.Result.LabelA, study.RunsA}, {study.Result.LabelB, study.RunsB}} {
		runs, err := results.LoadAll(side.runs)
		if err != nil {
			return nil, fmt.Errorf("A/B study %s: %w", dir, err)
		}
		sets = append(sets, Set{Label: side.label, Runs: runs})
	}
	return sets, nil
}

// GroupRepeats merges consecutive sets of one run each whose runs lie in
// the same repeat set's directory: repeats given one by one (dbio compare
// set/r1 set/r2 set/r3 other/r1 ...) compare as the sets they belong to.
func GroupRepeats(sets []Set) []Set {
	var out []Set
	parentOf := func(s Set) string {
		if s.Dir != "" || len(s.Runs) != 1 {
			return ""
		}
		if p := filepath.Dir(s.Runs[0].Path); results.IsRepeatSet(p) {
			return p
		}
		return ""
	}
	prev := ""
	for _, s := range sets {
		p := parentOf(s)
		if p != "" && p == prev {
			out[len(out)-1].Runs = append(out[len(out)-1].Runs, s.Runs...)
			continue
		}
		if p != "" {
			if m, err := results.ReadRepeatSet(p); err == nil {
				s.Label = m.Label
				if s.Label == "" {
					s.Label = m.Name
				}
			}
		}
		out = append(out, s)
		prev = p
	}
	return out
}

// AnyRepeated says whether some set holds more than one run: the
// comparison is then one of repeats.
func AnyRepeated(sets []Set) bool {
	for _, s := range sets {
		if len(s.Runs) > 1 {
			return true
		}
	}
	return false
}

// setView is a set as the comparison shows it.
type setView struct {
	Set
	Letter string
	runs   []*runView
}

func (s *setView) recorded() []*analysis.Recorded { return runViews(s.runs) }

// WriteRepeatedComparison writes the comparison of two or more sets of
// repeats, the first being the baseline, and returns its findings for a
// terminal. Sets whose first runs are not comparable are refused with a
// *NotComparableError unless opts.Force is set.
func WriteRepeatedComparison(out Output, sets []Set, opts Options) ([]string, error) {
	if len(sets) < 2 {
		return nil, fmt.Errorf("a comparison needs at least two configurations, got %d: name the baseline's repeat set first, then the others", len(sets))
	}
	views := make([]*setView, len(sets))
	for i, s := range sets {
		if len(s.Runs) == 0 {
			return nil, errors.New("configuration " + s.Label + " has no run to compare")
		}
		v := &setView{Set: s, Letter: letter(i), runs: viewsOf(s.Runs, opts)}
		for j, r := range v.runs {
			r.Letter = v.Letter + strconv.Itoa(j+1)
		}
		views[i] = v
	}
	// Each configuration's first repeat stands for it where the runs'
	// settings are compared, named as the configuration.
	firsts := viewsOf(firstRuns(sets), opts)
	for i, r := range firsts {
		r.Name = views[i].Label
	}
	refusal, warnings := comparability(firsts)
	if refusal.Refused() && !opts.Force {
		return nil, notComparable(refusal)
	}
	d, findings := repeatedCompareDocument(views, firsts, refusal.Reasons(), warnings, opts)
	for _, w := range warnings {
		findings = append(findings, "Note: "+sentenceCase(w)+".")
	}
	return findings, out.write(d)
}

func firstRuns(sets []Set) []*results.Loaded {
	out := make([]*results.Loaded, len(sets))
	for i, s := range sets {
		out[i] = s.Runs[0]
	}
	return out
}

// repeatedVerdict says what the repeats let one conclude about a difference.
func repeatedVerdict(d analysis.RepeatedDifference) string {
	switch {
	case d.Verdict == analysis.Significant:
		t := "significant"
		if d.RatioCI {
			t += fmt.Sprintf(", %.0f %% CI of the ratio %s–%s", (1-d.Alpha)*100, ratio(d.RatioLo), ratio(d.RatioHi))
		}
		return t + ", p " + pValue(d.P)
	case d.WithinNoise:
		return "within the noise between repeats (p " + pValue(d.P) + ")"
	case d.Verdict == analysis.TooFewRepeats:
		return fmt.Sprintf("too few repeats to tell (%d a side needed)", d.NeedPerSide)
	}
	return "no significant difference (p " + pValue(d.P) + ")"
}

// repeatedChange is the change of the medians, "+201 % (3.0x), better",
// with better or worse only where the difference is significant.
func repeatedChange(d analysis.RepeatedDifference) string {
	if d.UnderFloor {
		return signed(formatOf(d.Metric))(d.Differential) + " " + d.Metric.Unit
	}
	t := percentChange(d.A.Median, d.B.Median) + " (" + ratio(d.Ratio) + ")"
	if w := d.Judgement.Word(); d.Verdict == analysis.Significant && w != "" {
		t += ", " + w
	}
	return t
}

// repeatedVersusAll are the comparisons of every other set against A, by
// kind and metric ID, and the order the kinds and metrics come in.
type repeatedVersusAll struct {
	order []string // kind + "\x00" + metric ID
	by    map[string][]*analysis.RepeatedVersus
}

func compareSets(sets []*setView) repeatedVersusAll {
	all := repeatedVersusAll{by: map[string][]*analysis.RepeatedVersus{}}
	for i := 1; i < len(sets); i++ {
		for _, v := range analysis.CompareRepeatedSets(sets[0].recorded(), sets[i].recorded()) {
			k := v.Kind + "\x00" + v.Metric.ID
			if _, ok := all.by[k]; !ok {
				all.order = append(all.order, k)
				all.by[k] = make([]*analysis.RepeatedVersus, len(sets)-1)
			}
			all.by[k][i-1] = &v
		}
	}
	return all
}

// repeatedFindings say, per other set and kind, how each headline figure
// differs from A over the averages and whether that is significant.
func repeatedFindings(sets []*setView, all repeatedVersusAll, title func(string) string) []string {
	var out []string
	for i := 1; i < len(sets); i++ {
		byKind := map[string][]string{}
		rows := map[string]int{}
		var kinds []string
		for _, k := range all.order {
			v := all.by[k][i-1]
			if v == nil || !v.HasAverage || v.Metric.Better == results.NeitherBetter || !headlineMetric(v.Metric) {
				continue
			}
			if _, ok := byKind[v.Kind]; !ok {
				kinds = append(kinds, v.Kind)
			}
			a := v.Average
			byKind[v.Kind] = append(byKind[v.Kind], fmt.Sprintf("%s %s: %s", v.Metric.Title, repeatedChange(a), repeatedVerdict(a)))
			rows[v.Kind] = v.AverageRows
		}
		for _, kind := range kinds {
			per := "step"
			if kind == "fio" {
				per = "point"
			}
			out = append(out, fmt.Sprintf("%s: %s (%s, %s) against A (%s, %s), each repeat's average over %s: %s.",
				kindTitle(kind, title), sets[i].Letter, sets[i].Label, plural(len(sets[i].Runs), "repeat", "repeats"),
				sets[0].Label, plural(len(sets[0].Runs), "repeat", "repeats"), plural(rows[kind], per, per+"s"), strings.Join(byKind[kind], "; ")))
		}
	}
	return out
}

// repeatedHowToRead explains the tables once.
const repeatedHowToRead = "How to read the tables: each configuration's figure is the median over its repeats, with the 95 % confidence interval of that median in brackets where there are 6 repeats or more, " +
	"and the spread between its repeats (lowest–highest). The change is the configuration's median against A's, in % and as a ratio. " +
	"The verdict is a Mann-Whitney U test of the repeats at the 5 % level, and a difference is called significant only when it is also larger than the spread of each side's own repeats (as ratios for figures above zero: the medians' ratio beyond each side's highest/lowest): " +
	"a difference within the noise measured between repeats of the same configuration is never called. With fewer than 4 repeats a side no difference can be called, however large; " +
	"better or worse is said only of a significant difference. The average row compares each repeat's average over the rows every repeat has."

// repeatedTable lays out one metric of one kind across the sets.
func repeatedTable(id string, sets []*setView, vs []*analysis.RepeatedVersus) *table {
	var first *analysis.RepeatedVersus
	for _, v := range vs {
		if v != nil {
			first = v
			break
		}
	}
	m := first.Metric
	format := formatOf(m)
	key := first.Key
	per := map[string]string{"users": "step", "point": "point", "step": "step"}[key]
	var letters []string
	for _, s := range sets {
		letters = append(letters, s.Letter)
	}
	dir := map[results.Better]string{results.HigherBetter: "higher is better", results.LowerBetter: "lower is better", results.NeitherBetter: "neither is better"}[m.Better]
	t := &table{ID: id, Title: sentenceCase(m.Title) + " per " + per + " over the repeats: " + strings.Join(letters, " vs "),
		Caption: fmt.Sprintf("%s (%s): median [95 %% CI] and spread of each configuration's repeats.", figureLabel(m), dir)}
	t.Columns = []column{{Name: key, Numeric: key == "users"}, {Name: "A", Numeric: true, Group: "A"}, {Name: "A spread", Numeric: true, Group: "A"}}
	for _, s := range sets[1:] {
		g := s.Letter + " vs A"
		t.Columns = append(t.Columns, column{Name: s.Letter, Numeric: true, Group: g}, column{Name: s.Letter + " spread", Numeric: true, Group: g},
			column{Name: "change", Numeric: true, Group: g}, column{Name: "verdict", Wrap: true, Group: g})
	}
	// Rows in the order the comparisons found them, each label once.
	var labels []string
	seen := map[string]bool{}
	for _, v := range vs {
		if v == nil {
			continue
		}
		for _, r := range v.Rows {
			if !seen[r.Label] {
				seen[r.Label] = true
				labels = append(labels, r.Label)
			}
		}
	}
	figure := func(f analysis.RepeatedFigure) []cell {
		return []cell{{Text: repeatedFigureText(f, format), Raw: raw(f.Median)}, textCell(spreadText(f, m))}
	}
	versus := func(d analysis.RepeatedDifference) []cell {
		return append(figure(d.B), cell{Text: repeatedChange(d), Raw: raw(d.ChangePct), Class: judgementClass(d.Judgement)}, textCell(repeatedVerdict(d)))
	}
	empty := []cell{textCell("-"), textCell("-"), textCell("-"), textCell("-")}
	rowOf := func(v *analysis.RepeatedVersus, label string) (analysis.RepeatedVersusRow, bool) {
		if v == nil {
			return analysis.RepeatedVersusRow{}, false
		}
		for _, r := range v.Rows {
			if r.Label == label && r.Has {
				return r, true
			}
		}
		return analysis.RepeatedVersusRow{}, false
	}
	for _, label := range labels {
		cells := []cell{{Text: label, Raw: label}}
		var a []cell
		var rest []cell
		for _, v := range vs {
			r, ok := rowOf(v, label)
			if !ok {
				rest = append(rest, empty...)
				continue
			}
			if a == nil {
				a = figure(r.A)
			}
			rest = append(rest, versus(r.RepeatedDifference)...)
		}
		if a == nil {
			a = []cell{textCell("-"), textCell("-")}
		}
		t.Rows = append(t.Rows, append(append(cells, a...), rest...))
	}
	foot := []cell{textCell("average")}
	var a, rest []cell
	for _, v := range vs {
		if v == nil || !v.HasAverage {
			rest = append(rest, empty...)
			continue
		}
		if a == nil {
			a = figure(v.Average.A)
		}
		rest = append(rest, versus(v.Average)...)
	}
	if a != nil {
		t.Foot = [][]cell{append(append(foot, a...), rest...)}
	}
	return t
}

// repeatedChart draws the headline throughput of each set against users:
// its median solid and the lowest and highest repeat dotted, a color per set.
func repeatedChart(id string, sets []*setView, kind string) *chart {
	if c := repeatedStripChart(id, sets, kind); c != nil {
		return c
	}
	var c *chart
	for i, s := range sets {
		for _, t := range analysis.RepeatedTables(s.recorded()) {
			if t.Kind != kind || t.Key != "users" || len(t.Metrics) == 0 {
				continue
			}
			m := t.Metrics[0]
			if c == nil {
				c = &chart{ID: id, Title: sentenceCase(m.Title) + " vs virtual users over the repeats", X: usersAxis(), Y: axis{Label: m.Title, Unit: m.Unit, Zero: true},
					Note: "One color per configuration: its median solid, its lowest and highest repeat dotted. Where the dotted bands of two configurations overlap, a single run of each could have come out either way."}
			}
			med, lo, hi := series{Name: s.Letter + " " + s.Label + " median", Color: i}, series{Name: s.Letter + " lowest", Color: i, Dash: dotted}, series{Name: s.Letter + " highest", Color: i, Dash: dotted}
			for _, r := range t.Rows {
				if f := r.Figures[0]; f.N > 0 {
					x := float64(r.Users)
					med.X, med.Y = append(med.X, x), append(med.Y, f.Median)
					lo.X, lo.Y = append(lo.X, x), append(lo.Y, f.Min)
					hi.X, hi.Y = append(hi.X, x), append(hi.Y, f.Max)
				}
			}
			c.Series = append(c.Series, med, lo, hi)
		}
	}
	if c == nil || !c.hasData() {
		return nil
	}
	return c
}

// repeatedStripChart is the chart of configurations that each measured
// one step: a row per configuration, a dot per repeat on the throughput's
// axis, so that the spread within each is seen beside the gap between
// them (a line of one point per configuration says nothing). Nil when a
// configuration has more than one step, or none.
func repeatedStripChart(id string, sets []*setView, kind string) *chart {
	var c *chart
	var all []float64
	for i, s := range sets {
		var one *analysis.RepeatedTable
		for _, t := range analysis.RepeatedTables(s.recorded()) {
			if t.Kind == kind && t.Key == "users" && len(t.Metrics) > 0 {
				one = &t
				break
			}
		}
		if one == nil || len(one.Rows) != 1 || one.Rows[0].Figures[0].N == 0 {
			return nil
		}
		m, f := one.Metrics[0], one.Rows[0].Figures[0]
		if c == nil {
			c = &chart{ID: id, Title: sentenceCase(m.Title) + " of each repeat", X: axis{Label: m.Title, Unit: m.Unit, Zero: true},
				Note: fmt.Sprintf("One row per configuration, a dot per repeat at %s, the line from its lowest to its highest: where the lines of two configurations overlap, a single run of each could have come out either way.", plural(one.Rows[0].Users, "user", "users"))}
			letters := map[float64]string{}
			for j, t := range sets {
				letters[float64(len(sets)-j)] = t.Letter
				c.Y.Ticks = append(c.Y.Ticks, float64(len(sets)-j))
			}
			c.Y = axis{Label: "configuration", Fixed: true, Min: 0.5, Max: float64(len(sets)) + 0.5, Ticks: c.Y.Ticks, Integer: true,
				Format: func(v float64) string { return letters[v] }}
		}
		vs := slices.Sorted(slices.Values(f.Values))
		row := series{Name: s.Letter + " " + s.Label, Color: i, Y: make([]float64, len(vs))}
		row.X = vs
		for j := range row.Y {
			row.Y[j] = float64(len(sets) - i)
		}
		c.Series = append(c.Series, row)
		all = append(all, vs...)
	}
	if c == nil || !c.hasData() {
		return nil
	}
	// Sides a decade or more apart would crowd the slower one's dots at
	// zero: a log axis shows each side's spread.
	if lo, hi := slices.Min(all), slices.Max(all); lo > 0 && hi/lo >= 10 {
		c.X.Zero, c.X.Log = false, true
	}
	return c
}

// setsTable lists the compared configurations and their repeats.
func setsTable(sets []*setView) *table {
	t := &table{ID: "cmp-sets", Title: "Configurations compared", Caption: "A is the baseline every other configuration is compared against; each is a set of repeats of one run."}
	t.Columns = []column{{Name: "set"}, {Name: "configuration"}, {Name: "repeats", Numeric: true}, {Name: "completed", Numeric: true}, {Name: "storage", Wrap: true}, {Name: "results", Wrap: true}}
	for _, s := range sets {
		completed := 0
		for _, r := range s.runs {
			if r.Run.Status == results.StatusCompleted {
				completed++
			}
		}
		var storage []string
		for _, ti := range targetsOf(s.runs[0].Run) {
			storage = append(storage, ti.Path+": "+ti.Describe())
		}
		where := s.Dir
		if where == "" {
			var paths []string
			for _, r := range s.runs {
				paths = append(paths, r.Path)
			}
			where = strings.Join(paths, ", ")
		}
		t.Rows = append(t.Rows, []cell{textCell(s.Letter), textCell(s.Label), numCell(float64(len(s.runs)), thousands), numCell(float64(completed), thousands),
			textCell(strings.Join(storage, "; ")), textCell(where)})
	}
	return t
}

// repeatedCompareDocument is the comparison of sets[1:] against sets[0].
func repeatedCompareDocument(sets []*setView, firsts []*runView, reasons, warnings []string, opts Options) (*document, []string) {
	var names []string
	for _, s := range sets {
		names = append(names, fmt.Sprintf("%s %s (%s)", s.Letter, s.Label, plural(len(s.runs), "repeat", "repeats")))
	}
	d := &document{Title: "dbio comparison of repeats: " + strings.Join(names, " vs "), Subtitle: compareSubtitle(firsts)}
	for _, s := range sets {
		d.Facts = append(d.Facts, fact{s.Letter, fmt.Sprintf("%s — %s, %s", s.Label, runSubtitle(s.runs[0]), plural(len(s.runs), "repeat", "repeats"))})
	}
	if len(reasons) > 0 {
		d.Alerts = append(d.Alerts, alert{"error", "Compared with --force although the configurations are not comparable: " + strings.Join(reasons, "; ") + "."})
	}
	for _, w := range warnings {
		d.Alerts = append(d.Alerts, alert{"warning", sentenceCase(w) + "."})
	}
	for _, s := range sets {
		for _, r := range s.runs {
			if r.Run.Status != results.StatusCompleted {
				d.Alerts = append(d.Alerts, alert{"warning", fmt.Sprintf("%s (%s): the run ended %s; the steps it finished are counted.", r.Letter, r.Path, r.Run.Status)})
			}
			for _, c := range r.Run.Checks {
				if !c.Passed && !c.Skipped {
					d.Alerts = append(d.Alerts, alert{"error", r.Letter + ": consistency check failed: " + c.Name + "."})
				}
			}
		}
	}
	all := compareSets(sets)
	summary := &section{ID: "summary", Title: "Summary"}
	d.Sections = append(d.Sections, summary)
	findings := repeatedFindings(sets, all, firsts[0].title)
	if len(findings) == 0 {
		findings = append(findings, "The configurations have no step in common to compare.")
	}
	// A change of bottleneck is said first, each configuration by the
	// verdict most of its repeats had.
	recorded := make([][]*analysis.Recorded, len(sets))
	letters := make([]*runView, len(sets))
	for i, s := range sets {
		recorded[i], letters[i] = s.recorded(), &runView{Letter: s.Letter}
	}
	var leads []string
	for _, w := range firsts[0].Workloads {
		if lead := bottleneckFinding(letters, analysis.ModalRows(recorded, w.Kind)); lead != "" {
			leads = append(leads, lead)
		}
	}
	findings = append(leads, findings...)
	summary.add(&bullets{Items: findings})
	overview := &section{ID: "cmp-sets-section", Title: "Configurations and what differs"}
	overview.add(setsTable(sets))
	if diff := sideBySide(firsts, true); len(diff.Rows) > 0 {
		diff.Caption += " Read from each configuration's first repeat."
		overview.add(diff)
	} else {
		overview.add(&paragraph{Text: "The configurations, hosts, storage and versions of the first repeats are identical: the comparison measures run-to-run variation.", Class: "note"})
	}
	d.Sections = append(d.Sections, overview)
	var kinds []string
	byKind := map[string]*section{}
	for _, k := range all.order {
		vs := all.by[k]
		kind := strings.SplitN(k, "\x00", 2)[0]
		sec, ok := byKind[kind]
		if !ok {
			sec = &section{ID: "cmp-rep-" + kind, Title: kindTitle(kind, firsts[0].title) + " compared over the repeats"}
			sec.add(&paragraph{Class: "note", Text: repeatedHowToRead})
			if c := repeatedChart("cmp-rep-"+kind+"-throughput", sets, kind); c != nil {
				sec.add(c)
			}
			byKind[kind] = sec
			kinds = append(kinds, kind)
		}
		var metric analysis.Metric
		for _, v := range vs {
			if v != nil {
				metric = v.Metric
				break
			}
		}
		sec.add(repeatedTable("cmp-rep-"+kind+"-"+metric.ID, sets, vs))
	}
	for _, k := range kinds {
		d.Sections = append(d.Sections, byKind[k])
	}
	overview.add(sideBySide(firsts, false))
	var runs []*runView
	for _, s := range sets {
		runs = append(runs, s.runs...)
	}
	d.Footer = footer(opts, runs)
	return d, findings
}
