package report

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"dbio/internal/results"
)

// A trend page: figures over the runs a history store remembers, one chart
// per figure and step, a line per configuration, and a dashed mark where
// the kernel, dbio's version, the engine's version or a setting changed
// from the run before. Its input is what the store read from the runs'
// results directories; the page is self-contained as every report is.

// TrendRun is one run of a trend, as the history keeps it.
type TrendRun struct {
	ID      string
	Started time.Time
	// ConfigKey names the run's configuration: runs with the same key
	// measured the same thing the same way, and share a line.
	ConfigKey string
	// Describe is a few words of the configuration for the legend
	// ("tpcc on postgres, 4 users").
	Describe              string
	Engine, EngineVersion string
	Kernel, DBIOVersion   string
	Storage               string
	Labels                []string
	// Settings are the configuration's named values a reader may change
	// between runs (engine settings, buffer pool, storage limit), so that a
	// change is marked by name.
	Settings map[string]string
}

// TrendPoint is one value of a figure at one step of a run (Runs[Run]).
type TrendPoint struct {
	Run    int
	Figure results.FigureName
	Step   string
	Value  float64
}

// TrendPage is what a trend page shows: the runs (oldest first) and their
// points; Filter says in words which runs the user picked.
type TrendPage struct {
	Runs   []TrendRun
	Points []TrendPoint
	Filter string
}

// WriteTrendPage writes the page to path: a new file, or one dbio wrote
// before (never someone else's, never through a link).
func WriteTrendPage(path string, p TrendPage, now time.Time) error {
	if err := checkOwned(path, generatorMark); err != nil {
		return err
	}
	var page bytes.Buffer
	if err := writeHTML(&page, trendDocument(p, now), ""); err != nil {
		return err
	}
	return writeShared(path, page.Bytes())
}

// trendChange names what changed in run b from run a, the run before it:
// the kernel, dbio's version, the engine's version, a setting, or else the
// configuration; nothing for runs of one configuration on the same software.
func trendChange(a, b TrendRun) []string {
	var out []string
	if a.Kernel != b.Kernel {
		out = append(out, "kernel "+orNone(b.Kernel))
	}
	if a.DBIOVersion != b.DBIOVersion {
		out = append(out, "dbio "+orNone(b.DBIOVersion))
	}
	if a.Engine == b.Engine && a.EngineVersion != b.EngineVersion {
		out = append(out, b.Engine+" "+orNone(b.EngineVersion))
	}
	if a.ConfigKey != b.ConfigKey {
		var names []string
		for k := range a.Settings {
			names = append(names, k)
		}
		for k := range b.Settings {
			if _, ok := a.Settings[k]; !ok {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		settings := 0
		for _, k := range names {
			if a.Settings[k] != b.Settings[k] {
				out = append(out, k+"="+orNone(b.Settings[k]))
				settings++
			}
		}
		if settings == 0 {
			out = append(out, "configuration "+b.ConfigKey)
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// trendChart is one figure at one step.
type trendChart struct {
	figure results.FigureName
	step   string
}

func trendDocument(p TrendPage, now time.Time) *document {
	d := &document{Title: "dbio history: trends", Subtitle: fmt.Sprintf("%s over %s, oldest first", plural(len(p.Points), "point", "points"), plural(len(p.Runs), "run", "runs")),
		Footer: "Rendered by dbio from its history store on " + now.UTC().Format("2006-01-02 15:04 UTC") + "; the store is read from the runs' results directories."}
	if p.Filter != "" {
		d.Facts = append(d.Facts, fact{"Runs", p.Filter})
	}
	if len(p.Runs) > 0 {
		d.Facts = append(d.Facts, fact{"From", p.Runs[0].Started.UTC().Format("2006-01-02 15:04")}, fact{"To", p.Runs[len(p.Runs)-1].Started.UTC().Format("2006-01-02 15:04")})
	}

	// Every chart shares the runs' axis: run n is the n-th oldest, so that
	// a change marked at run n is at the same place on every chart.
	changes := make([][]string, len(p.Runs))
	var marks []mark
	for i := 1; i < len(p.Runs); i++ {
		changes[i] = trendChange(p.Runs[i-1], p.Runs[i])
		if len(changes[i]) > 0 {
			label := changes[i][0]
			if len(changes[i]) > 1 {
				label += fmt.Sprintf(" +%d", len(changes[i])-1)
			}
			marks = append(marks, mark{X: float64(i + 1), Label: label, Title: "run " + p.Runs[i].ID + ": " + strings.Join(changes[i], ", ")})
		}
	}
	configs := map[string]int{}
	var configOrder []string
	for _, r := range p.Runs {
		if _, ok := configs[r.ConfigKey]; !ok {
			configs[r.ConfigKey] = len(configOrder)
			configOrder = append(configOrder, r.ConfigKey)
		}
	}
	describe := map[string]string{}
	for _, r := range p.Runs {
		if describe[r.ConfigKey] == "" {
			describe[r.ConfigKey] = r.Describe
		}
	}

	var order []trendChart
	values := map[trendChart]map[string]*series{}
	for _, pt := range p.Points {
		if pt.Run < 0 || pt.Run >= len(p.Runs) {
			continue
		}
		k := trendChart{pt.Figure, pt.Step}
		if values[k] == nil {
			values[k] = map[string]*series{}
			order = append(order, k)
		}
		key := p.Runs[pt.Run].ConfigKey
		s := values[k][key]
		if s == nil {
			name := key
			if describe[key] != "" {
				name += ": " + describe[key]
			}
			s = &series{Name: name, Color: configs[key], Dash: configs[key] / len(palette)}
			values[k][key] = s
		}
		s.X = append(s.X, float64(pt.Run+1))
		s.Y = append(s.Y, pt.Value)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].figure != order[j].figure {
			return order[i].figure < order[j].figure
		}
		return stepOrder(order[i].step) < stepOrder(order[j].step)
	})

	runLabel := func(x float64) string {
		i := int(x) - 1
		if i < 0 || i >= len(p.Runs) || float64(i+1) != x {
			return ""
		}
		return fmt.Sprintf("%d (%s)", i+1, p.Runs[i].Started.UTC().Format("01-02"))
	}
	charts := &section{ID: "trends", Title: "Trends"}
	if len(order) == 0 {
		charts.add(&paragraph{Text: "No run the history picked recorded the figures asked for.", Class: "note"})
	}
	for _, k := range order {
		def := k.figure.Def()
		title := def.Title
		if k.step != "" && k.step != "run" {
			title += " at " + k.step
		}
		c := &chart{ID: "trend-" + slug(string(k.figure)+"-"+k.step), Title: title,
			Note: "One line per configuration; a dashed line marks a run whose kernel, dbio version, engine version or settings differ from the run before it (the Runs table names the change).",
			X:    axis{Label: "Run, oldest first", Integer: true, Format: runLabel},
			Y:    figureAxis(k.figure), Marks: marks}
		for _, key := range configOrder {
			if s := values[k][key]; s != nil {
				c.Series = append(c.Series, *s)
			}
		}
		charts.add(c)
	}
	d.Sections = append(d.Sections, charts)

	runs := &section{ID: "runs", Title: "Runs"}
	t := &table{ID: "trend-runs", Title: "The runs, oldest first",
		Columns: []column{{Name: "#", Numeric: true}, {Name: "started"}, {Name: "run"}, {Name: "configuration"}, {Name: "engine"},
			{Name: "storage", Wrap: true}, {Name: "kernel"}, {Name: "dbio"}, {Name: "labels"}, {Name: "changed from the run before", Wrap: true}}}
	for i, r := range p.Runs {
		t.Rows = append(t.Rows, []cell{numCell(float64(i+1), quantity), textCell(r.Started.UTC().Format("2006-01-02 15:04:05")), textCell(r.ID),
			textCell(r.ConfigKey), textCell(strings.TrimSpace(r.Engine + " " + r.EngineVersion)), textCell(r.Storage), textCell(r.Kernel),
			textCell(r.DBIOVersion), textCell(strings.Join(r.Labels, ", ")), textCell(strings.Join(changes[i], ", "))})
	}
	runs.add(t)
	d.Sections = append(d.Sections, runs)
	return d
}

// stepOrder sorts a run's own figures first, then steps by the users in
// their name (users-2 before users-10), then by name.
func stepOrder(step string) string {
	if step == "run" || step == "" {
		return ""
	}
	var n int
	if _, err := fmt.Sscanf(step, "users-%d", &n); err == nil {
		return fmt.Sprintf("1%09d", n)
	}
	return "2" + step
}

// slug makes an element id of free text: letters, digits and dashes.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
