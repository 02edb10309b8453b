package report

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"dbio/internal/results"
)

// Extreme figures (1e308, 1e-300, 0, NaN and infinities, from a damaged or
// edited results directory, or overflowing a mean) must neither draw NaN
// or far-off coordinates in a chart nor print hundreds of digits.

// hostileFigures sets every figure of quick-tmpfs's TPC-C steps, and every
// value of its per-second series, to v (and every second one to w).
func hostileFigures(t testing.TB, v, w float64) *results.Loaded {
	t.Helper()
	l := load(t, "quick-tmpfs")[0]
	l.Steps = append([]results.Step(nil), l.Steps...)
	for i := range l.Steps {
		s := &l.Steps[i]
		s.Figures = append([]results.Figure(nil), s.Figures...)
		for j := range s.Figures {
			s.Figures[j].Value = v
			if j%2 == 1 {
				s.Figures[j].Value = w
			}
		}
	}
	rows := make([]results.LoadedRow, len(l.Series.Rows))
	for i, r := range l.Series.Rows {
		r.Values = make([]float64, len(r.Values))
		for j := range r.Values {
			r.Values[j] = []float64{v, w, math.NaN(), math.Inf(1), math.Inf(-1), 1e308, -1e308, 1e-300, 0}[(i+j)%9]
		}
		rows[i] = r
	}
	l.Series.Rows = rows
	return l
}

var longNumber = regexp.MustCompile(`[0-9][0-9,.]{24,}`)

// TestExtremeFiguresCompareBounded compares runs whose figures are 1e300
// against 1e-300, 0 against a value and the reverse: every change and ratio
// is printed in a bounded form, never as a 300-digit number, and no chart
// draws a NaN or infinite coordinate.
func TestExtremeFiguresCompareBounded(t *testing.T) {
	cases := []struct {
		name       string
		a, b       *results.Loaded
		wantChange string
	}{
		{"huge against tiny", hostileFigures(t, 1e-300, 1e-300), hostileFigures(t, 1e300, 1e300), "> +999,900 %"},
		{"a value against 0", hostileFigures(t, 0, 0), hostileFigures(t, 5, 5), "n/a (A is 0)"},
		{"huge against a value", hostileFigures(t, 1, 1), hostileFigures(t, 1.7e308, 1e308), "> +999,900 %"},
		{"mixed", hostileFigures(t, 1e300, 0), hostileFigures(t, -1e300, 1e-300), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := OutputAt(filepath.Join(t.TempDir(), "c.html"))
			c.b.Run.ID += "-b"
			headlines, err := WriteComparison(out, []*results.Loaded{c.a, c.b}, testOptions())
			if err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(out.Markdown)
			if err != nil {
				t.Fatal(err)
			}
			page, err := os.ReadFile(out.HTML)
			if err != nil {
				t.Fatal(err)
			}
			for name, text := range map[string]string{"headlines": strings.Join(headlines, "\n"), "summary.md": string(md), "report.html": string(page)} {
				if m := longNumber.FindString(text); m != "" {
					t.Errorf("%s prints a %d-character number: %s", name, len(m), clip(m))
				}
			}
			if c.wantChange != "" && !strings.Contains(strings.Join(headlines, "\n"), c.wantChange) {
				t.Errorf("headlines do not say %q:\n%s", c.wantChange, strings.Join(headlines, "\n"))
			}
			checkSVGs(t, string(page))
		})
	}
}

// TestExtremeFiguresReportCharts renders one run with extreme figures and
// series: its charts draw no NaN or infinite coordinate.
func TestExtremeFiguresReportCharts(t *testing.T) {
	for _, v := range [][2]float64{{1e308, -1e308}, {1e300, 1e-300}, {0, 0}, {math.MaxFloat64, math.SmallestNonzeroFloat64}} {
		out := OutputIn(t.TempDir())
		if err := WriteReport(out, []*results.Loaded{hostileFigures(t, v[0], v[1])}, testOptions()); err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(out.HTML)
		if err != nil {
			t.Fatal(err)
		}
		checkSVGs(t, string(page))
		md, err := os.ReadFile(out.Markdown)
		if err != nil {
			t.Fatal(err)
		}
		if m := longNumber.FindString(string(page) + string(md)); m != "" {
			t.Errorf("%v: the report prints a %d-character number: %s", v, len(m), clip(m))
		}
	}
}

var (
	anySVG = regexp.MustCompile(`(?s)<svg.*?</svg>`)
	// coordAttr is every attribute of an SVG that holds a coordinate or a
	// length, and path data.
	coordAttr = regexp.MustCompile(`\s(x|y|x1|x2|y1|y2|cx|cy|r|width|height|d|viewBox)="([^"]*)"`)
	svgNumber = regexp.MustCompile(`-?[0-9.]+(e[-+]?[0-9]+)?`)
)

// svgBound is the largest coordinate a chart may draw: a few times its
// width, which lines clipped to the plot may reach.
const svgBound = 10 * chartWidth

// checkSVGs fails for any SVG in page with a coordinate that is NaN,
// infinite or beyond svgBound.
func checkSVGs(t *testing.T, page string) {
	t.Helper()
	for _, svg := range anySVG.FindAllString(page, -1) {
		if err := svgCoordinatesProblem(svg); err != "" {
			t.Errorf("%s in %s", err, clip(svg))
		}
	}
}

// svgCoordinatesProblem names the first coordinate of svg that is not a
// finite number within svgBound, or returns "".
func svgCoordinatesProblem(svg string) string {
	for _, m := range coordAttr.FindAllStringSubmatch(svg, -1) {
		name, value := m[1], m[2]
		if strings.Contains(value, "NaN") || strings.Contains(value, "Inf") {
			return name + `="` + clip(value) + `"`
		}
		for _, n := range svgNumber.FindAllString(value, -1) {
			if f, err := strconv.ParseFloat(n, 64); err != nil || math.Abs(f) > svgBound {
				return name + `="` + clip(value) + `" (` + n + ")"
			}
		}
	}
	return ""
}

// hostileValues are the values a chart meets in a damaged or extreme
// results directory.
var hostileValues = []float64{1e308, -1e308, 1e-300, -1e-300, 0, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64, 1e15, 1e16, 42}

// hostileCharts are charts of every kind (lines on linear and log axes,
// timelines with bands and marks, stacked areas, bars) over ys.
func hostileCharts(xs, ys []float64) []*chart {
	mk := func(x, y axis) *chart {
		return &chart{ID: "h", Title: "hostile", X: x, Y: y, Series: []series{{Name: "a", X: xs, Y: ys}, {Name: "b", X: xs, Y: ys, Color: 1}}}
	}
	var out []*chart
	for _, y := range []axis{{Label: "v"}, {Label: "v", Zero: true}, {Label: "v", Log: true}, {Label: "v", Fixed: true, Max: 100}} {
		out = append(out, mk(axis{Label: "users", Integer: true}, y), mk(axis{Label: "x", Log: true}, y))
		tl := mk(axis{Label: "time", Unit: "s", Tight: true}, y)
		tl.Bands = []band{{From: xs[0], To: xs[len(xs)-1], Label: "step"}, {From: math.NaN(), To: math.Inf(1), Label: "bad"}, {From: -1e308, To: 1e308, Ramp: true}}
		tl.Marks = []mark{{X: xs[len(xs)/2], Label: "steady"}, {X: math.Inf(1), Label: "never"}, {X: 1e308, Label: "far"}}
		out = append(out, tl)
		st := mk(axis{Label: "time", Unit: "s", Tight: true}, y)
		st.Stacked = true
		out = append(out, st)
		bars := mk(axis{Label: "block size", Ticks: xs}, y)
		bars.Bars = true
		out = append(out, bars)
	}
	return out
}

// TestChartsNeverDrawNonFinite renders charts of every kind over hostile
// values: a single point, all equal, mixed with ordinary ones, and every
// pair of extremes. No SVG holds NaN, Inf or a coordinate beyond bounds.
func TestChartsNeverDrawNonFinite(t *testing.T) {
	var sets [][2][]float64
	for _, v := range hostileValues {
		sets = append(sets,
			[2][]float64{{1}, {v}},                   // a single point
			[2][]float64{{1, 2, 3}, {v, v, v}},       // all equal
			[2][]float64{{1, 2, 3, 4}, {1, v, 3, 2}}, // one among ordinary values
			[2][]float64{{v, 2, 3}, {1, 2, 3}},       // on the x axis
			[2][]float64{{1, 2}, {v, -v}},            // and its opposite
		)
		for _, w := range hostileValues {
			sets = append(sets, [2][]float64{{1, 2}, {v, w}}, [2][]float64{{v, w}, {1, 2}})
		}
	}
	for _, s := range sets {
		for i, c := range hostileCharts(s[0], s[1]) {
			if p := svgCoordinatesProblem(c.SVG()); p != "" {
				t.Errorf("chart %d of x %v, y %v: %s", i, s[0], s[1], p)
			}
		}
	}
}

// FuzzChartSVG draws charts of every kind through two points of any value.
func FuzzChartSVG(f *testing.F) {
	for _, v := range hostileValues {
		f.Add(1.0, v, 2.0, -v)
		f.Add(v, 1.0, v, 2.0)
	}
	f.Fuzz(func(t *testing.T, x1, y1, x2, y2 float64) {
		for i, c := range hostileCharts([]float64{x1, x2}, []float64{y1, y2}) {
			if p := svgCoordinatesProblem(c.SVG()); p != "" {
				t.Errorf("chart %d through (%g, %g), (%g, %g): %s", i, x1, y1, x2, y2, p)
			}
		}
	})
}

// TestPercentChange: the one rule every comparison prints its changes by.
func TestPercentChange(t *testing.T) {
	cases := []struct {
		a, b float64
		want string
	}{
		{100, 155, "+55 %"},
		{100, 44, "−56 %"},
		{100, 1350, "+1,250 %"},
		{5, 5, "0.0 %"},
		{0, 0, "0.0 %"},
		{0, 5, "n/a (A is 0)"},
		{0, -5, "n/a (A is 0)"},
		{1e-300, 1e300, "> +999,900 % (A tiny next to B)"},
		{1, 1.7e308, "> +999,900 % (A tiny next to B)"},
		{1, -1e6, "< −999,900 % (A tiny next to B)"},
		{1e300, 1e-300, "−100 %"},
		{math.Inf(1), 5, "n/a (not a finite number)"},
		{5, math.Inf(-1), "n/a (not a finite number)"},
		{math.NaN(), 5, "-"},
		{5, math.NaN(), "-"},
		{1, 10000, "+999,900 %"}, // the largest change written as a number
	}
	for _, c := range cases {
		if got := percentChange(c.a, c.b); got != c.want {
			t.Errorf("percentChange(%g, %g) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
