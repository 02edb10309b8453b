package report

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/results"
	"dbio/internal/units"
)

// A small SVG chart renderer: several series over linear or log axes as
// lines, as stacked areas (shares that add up, such as CPU time) or as
// grouped bars (a few categories, such as block sizes), nice ticks, shaded
// steps, a legend. It writes the same bytes for the same
// input, uses no script and no web font, and styles with presentation
// attributes so that the SVG also stands alone and prints.

// axis describes one axis of a chart.
type axis struct {
	Label string
	Unit  string
	// Log plots log10 of the values (a value ≤ 0 is left out).
	Log bool
	// Integer axes (virtual users) tick at whole numbers only.
	Integer bool
	// Zero makes a linear axis start at 0.
	Zero bool
	// Fixed sets the range to [Min, Max] (0–100 % axes).
	Fixed    bool
	Min, Max float64
	// Tight keeps the range to the data (timelines): ticks fall inside it.
	Tight bool
	// Ticks replaces the computed ticks (block sizes); Format writes them.
	Ticks  []float64
	Format func(float64) string
	// Recorded is what the data table's CSV keeps of a value drawn at v,
	// where the axis draws another quantity than it names (a percentile
	// drawn as its nines); nil keeps v.
	Recorded func(v float64) float64
}

// figureAxis is a linear axis from zero of a recorded figure, titled and
// in the unit the catalogue gives it.
func figureAxis(name results.FigureName) axis {
	d := name.Def()
	return axis{Label: d.Title, Unit: d.Unit, Zero: true}
}

func (a axis) title() string {
	if a.Unit == "" {
		return a.Label
	}
	return a.Label + " (" + a.Unit + ")"
}

// series is one line of a chart. Y may hold NaN, which breaks the line.
type series struct {
	Name  string
	X, Y  []float64
	Color int
	// Dash is the line style: solid, dashed, dotted or dash-dot.
	Dash int
	// Unstacked keeps a series of a stacked chart a line of its own (a
	// process's CPU share over the machine's stacked CPU states).
	Unstacked bool
}

// Line styles.
const (
	solid = iota
	dashed
	dotted
	dashDot
)

var dashes = []string{"", "6 4", "2 3", "10 3 2 3"}

func dashAttr(d int) string {
	if d <= 0 {
		return ""
	}
	return ` stroke-dasharray="` + dashes[d%len(dashes)] + `"`
}

// band shades an x range: one step of a timeline, or its ramp-up.
type band struct {
	From, To float64
	Label    string
	Ramp     bool
}

// mark is a moment on a timeline worth pointing at (the second a step's
// throughput became steady): a dashed vertical line with a short label,
// Title saying it in full.
type mark struct {
	X     float64
	Label string
	Title string
}

// chart is one figure: its axes, lines and shaded ranges.
type chart struct {
	ID    string
	Title string
	// Note is a sentence under the figure saying how to read it.
	Note   string
	X, Y   axis
	Series []series
	Bands  []band
	// Marks are moments drawn over the plot (timelines only).
	Marks []mark
	// Stacked draws the series as areas piled in order, each from the top
	// of the one before; their data table keeps each series' own values.
	Stacked bool
	// Bars draws one group of bars per distinct x value, evenly spaced and
	// labelled by the x axis's format, one bar per series in each group.
	Bars bool
}

// stackedTops are the running sums of a stacked chart's stacked series,
// point by point; a missing value adds nothing to the pile below it, and a
// point missing from the whole pile (a gap between steps) stays missing.
// An unstacked series keeps its own values.
// A value the y axis cannot show counts as missing, and so does a
// running sum that leaves its range.
func (c *chart) stackedTops() [][]float64 {
	tops := make([][]float64, len(c.Series))
	var below []float64
	for i, s := range c.Series {
		if s.Unstacked {
			tops[i] = s.Y
			continue
		}
		tops[i] = make([]float64, len(s.Y))
		for j, y := range s.Y {
			if !c.Y.shows(y) {
				y = math.NaN()
			}
			if j < len(below) && !math.IsNaN(below[j]) {
				if math.IsNaN(y) {
					y = 0
				}
				y += below[j]
			}
			if !c.Y.shows(y) {
				y = math.NaN()
			}
			tops[i][j] = y
		}
		below = tops[i]
	}
	return tops
}

// anyAbove says some value exceeds v.
func anyAbove(vs []float64, v float64) bool {
	for _, x := range vs {
		if x > v {
			return true
		}
	}
	return false
}

// categories are a bar chart's distinct x values, in order.
func (c *chart) categories() []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, s := range c.Series {
		for _, x := range s.X {
			if c.X.shows(x) && !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sort.Float64s(out)
	return out
}

// categoryScale places a bar chart's categories evenly across the plot,
// one tick under each.
func (c *chart) categoryScale(cats []float64, x0, x1 float64) scale {
	s := scale{lo: -0.5, hi: float64(len(cats)) - 0.5, p0: x0, p1: x1, ticksGiven: true}
	for i := range cats {
		s.ticks = append(s.ticks, float64(i))
	}
	s.format = func(v float64) string {
		x := cats[int(v)]
		if c.X.Format != nil {
			return c.X.Format(x)
		}
		return quantity(x)
	}
	return s
}

// writeBars draws each series' values as one bar per category, the bars of
// a category side by side in series order.
func (c *chart) writeBars(b *strings.Builder, cats []float64, xsc, ysc scale) {
	index := map[float64]int{}
	for i, x := range cats {
		index[x] = i
	}
	group := math.Abs(xsc.px(1)-xsc.px(0)) * 0.7
	width := group / float64(max(len(c.Series), 1))
	base := ysc.px(ysc.lo)
	if !ysc.log && ysc.lo < 0 && ysc.hi > 0 {
		base = ysc.px(0)
	}
	for si, s := range c.Series {
		fmt.Fprintf(b, `<g class="bars" data-series="%s" fill="%s" fill-opacity="%s"%s stroke="%s">`, esc(s.Name), color(s.Color),
			[]string{"0.85", "0.45", "0.25", "0.6"}[s.Dash%4], dashAttr(s.Dash), color(s.Color))
		for j, x := range s.X {
			if !c.plottable(x, s.Y[j]) {
				continue
			}
			left := xsc.px(float64(index[x])) - group/2 + float64(si)*width
			top := ysc.px(s.Y[j])
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s"><title>%s: %s → %s %s</title></rect>`,
				num(left), num(math.Min(top, base)), num(width), num(math.Abs(base-top)), esc(s.Name), esc(xsc.label(float64(index[x]))), esc(quantity(s.Y[j])), esc(c.Y.Unit))
		}
		b.WriteString("</g>\n")
	}
}

// area is the outline of a stacked series: along its top, then back along
// the top of the series below it (the axis for the first), one polygon per
// run of points the pile has. A long series keeps about two points per
// pixel column, taken at an even stride.
func (c *chart) area(xs, top, below []float64, xsc, ysc scale) string {
	stride := 1
	if limit := int(math.Abs(xsc.p1-xsc.p0)) * decimateAbove; limit > 0 && len(xs) > limit {
		stride = (len(xs) + limit - 1) / limit
	}
	base := func(j int) float64 {
		if j < len(below) && c.Y.shows(below[j]) {
			return below[j]
		}
		return math.Max(ysc.lo, 0)
	}
	var b strings.Builder
	var run []int
	flush := func() {
		for i, j := range run {
			b.WriteString(map[bool]string{true: "M", false: " L"}[i == 0])
			b.WriteString(num(xsc.px(xs[j])) + " " + num(ysc.px(top[j])))
		}
		for i := len(run) - 1; i >= 0; i-- {
			b.WriteString(" L" + num(xsc.px(xs[run[i]])) + " " + num(ysc.px(base(run[i]))))
		}
		if len(run) > 0 {
			b.WriteString(" Z ")
		}
		run = nil
	}
	for j := range xs {
		if !c.plottable(xs[j], top[j]) {
			flush()
			continue
		}
		if j%stride == 0 || j == len(xs)-1 || (j+1 < len(xs) && math.IsNaN(top[j+1])) || len(run) == 0 {
			run = append(run, j)
		}
	}
	flush()
	return strings.TrimSpace(b.String())
}

// palette is Tableau 10: distinct on screen and on paper, and a family
// familiar from charts engineers already read.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

func color(i int) string { return palette[((i%len(palette))+len(palette))%len(palette)] }

// Geometry, in SVG user units (the figure scales to the page width).
const (
	chartWidth    = 1000
	plotHeight    = 290
	plotTop       = 12
	plotRight     = 18
	legendRow     = 18
	charWidth     = 6.4 // mean advance of a 11–12 px sans-serif glyph
	markerMax     = 40  // series with more points get no markers
	innerPad      = 10  // keeps markers off the frame on point charts
	decimateAbove = 2   // points per pixel column before min/max decimation
)

// hasData reports whether any series has a point the axes can show.
func (c *chart) hasData() bool {
	for _, s := range c.Series {
		for i := range s.X {
			if c.plottable(s.X[i], s.Y[i]) {
				return true
			}
		}
	}
	return false
}

// allZero reports whether every point the axes can show is zero: a flat
// line on the axis, which a sentence says better.
func (c *chart) allZero() bool {
	for _, s := range c.Series {
		for i := range s.X {
			if c.plottable(s.X[i], s.Y[i]) && s.Y[i] != 0 {
				return false
			}
		}
	}
	return true
}

func (c *chart) plottable(x, y float64) bool { return c.X.shows(x) && c.Y.shows(y) }

// chartLimit bounds the values a chart draws: no figure dbio measures
// comes near it, and a value beyond it (from a damaged or edited record)
// would stretch the axis until every real value sits on one pixel, or
// overflow the scale's arithmetic into NaN and infinite coordinates. A log
// axis also leaves out values under 1/chartLimit.
const chartLimit = units.Huge

// shows says the axis can draw v: a finite number within ±chartLimit,
// above 1/chartLimit on a log axis, and on a fixed axis no further from
// its range than the range is wide (drawn past the frame, clipped). Other
// values are left out of the scale and of the lines, which break there.
func (a axis) shows(v float64) bool {
	switch {
	case math.IsNaN(v) || math.Abs(v) > chartLimit:
		return false
	case a.Fixed && (v < a.Min-(a.Max-a.Min) || v > a.Max+(a.Max-a.Min)):
		return false
	}
	return !a.Log || v >= 1/chartLimit
}

// scale maps an axis's values onto pixels.
type scale struct {
	log        bool
	lo, hi     float64
	p0, p1     float64 // pixel of lo and of hi
	ticks      []float64
	step       float64
	format     func(float64) string
	ticksGiven bool
}

func (s scale) px(v float64) float64 {
	a, b, x := s.lo, s.hi, v
	if s.log {
		a, b, x = math.Log10(a), math.Log10(b), math.Log10(v)
	}
	if b == a {
		return (s.p0 + s.p1) / 2
	}
	return s.p0 + (x-a)/(b-a)*(s.p1-s.p0)
}

func (s scale) label(v float64) string {
	if s.format != nil {
		return s.format(v)
	}
	return tickLabel(v, s.step)
}

// newScale fits an axis to the values it has to show, leaving out those
// it cannot (see axis.shows).
func newScale(a axis, values []float64, extra []float64) scale {
	s := scale{log: a.Log, format: a.Format}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range append(append([]float64(nil), values...), extra...) {
		if !a.shows(v) {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	var given []float64
	for _, t := range a.Ticks {
		if a.shows(t) {
			given = append(given, t)
		}
	}
	a.Ticks = given
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
		if a.Log {
			lo, hi = 1, 10
		}
	}
	switch {
	case a.Fixed:
		s.lo, s.hi = a.Min, a.Max
		if len(a.Ticks) > 0 {
			s.ticks, s.ticksGiven = a.Ticks, true
		} else {
			s.ticks, _, _, s.step = linearTicks(s.lo, s.hi, 5, a.Integer, false)
		}
	case len(a.Ticks) > 0:
		s.ticks, s.ticksGiven = a.Ticks, true
		for _, t := range a.Ticks {
			lo, hi = math.Min(lo, t), math.Max(hi, t)
		}
		s.lo, s.hi = lo, hi
	case a.Log:
		s.lo, s.hi = lo/1.3, hi*1.3
		s.ticks = logTicks(s.lo, s.hi)
		if len(s.ticks) < 2 {
			s.lo, s.hi = snap125(lo, false), snap125(hi, true)
			if s.lo == s.hi {
				s.hi = snap125(s.hi*1.01, true)
			}
			s.ticks = logTicks(s.lo, s.hi)
		}
	default:
		if a.Zero {
			lo, hi = math.Min(lo, 0), math.Max(hi, 0)
		}
		// Tick labels keep at most nine decimals: a range narrower than
		// that, or than a billionth of its values, is drawn as one value.
		if hi-lo <= 1e-9*math.Max(1, math.Max(math.Abs(lo), math.Abs(hi))) {
			lo = (lo + hi) / 2
			if math.Abs(lo) < 1e-9 {
				lo = 0
			}
			hi = lo
			if lo == 0 {
				hi = 1
			} else {
				lo, hi = lo-math.Abs(lo)*0.1, hi+math.Abs(hi)*0.1
				if a.Integer {
					lo, hi = math.Floor(lo), math.Ceil(hi)
				}
			}
		}
		if a.Tight {
			s.ticks, s.lo, s.hi, s.step = linearTicks(lo, hi, 8, a.Integer, false)
			s.lo, s.hi = lo, hi
		} else {
			s.ticks, s.lo, s.hi, s.step = linearTicks(lo, hi, 5, a.Integer, !a.Integer)
			if a.Integer {
				s.lo, s.hi = lo, hi
			} else if hi > 0 && s.hi-hi < 0.02*(s.hi-s.lo) {
				// A peak on the top line would hide its marker in the frame.
				s.hi = roundTo(s.hi+s.step, decimalsFor(s.step))
				s.ticks = append(s.ticks, s.hi)
			}
		}
	}
	return s
}

// snap125 moves v to the nearest 1, 2 or 5 times a power of ten below it
// (or above it, with up).
func snap125(v float64, up bool) float64 {
	e := math.Floor(math.Log10(v))
	base := math.Pow(10, e)
	cands := []float64{1, 2, 5, 10}
	if up {
		for _, m := range cands {
			if m*base >= v*(1-1e-9) {
				return roundTo(m*base, max(0, int(-e)))
			}
		}
	}
	for i := len(cands) - 1; i >= 0; i-- {
		if cands[i]*base <= v*(1+1e-9) {
			return roundTo(cands[i]*base, max(0, int(-e)))
		}
	}
	return v
}

// textWidth estimates a label's width; SVG has no layout engine to ask.
func textWidth(s string) float64 { return float64(len([]rune(s))) * charWidth }

// num writes a coordinate with one decimal, which is finer than a pixel.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

func esc(s string) string { return html.EscapeString(s) }

// SVG renders the chart; a chart without a value its axes can show says
// so instead.
func (c *chart) SVG() string {
	if !c.hasData() {
		return c.emptySVG()
	}
	drawn := c.Series
	if c.Stacked {
		tops := c.stackedTops()
		drawn = make([]series, len(c.Series))
		for i, s := range c.Series {
			s.Y = tops[i]
			drawn[i] = s
		}
	}
	var xs, ys []float64
	for _, s := range drawn {
		for i := range s.X {
			if c.plottable(s.X[i], s.Y[i]) {
				xs = append(xs, s.X[i])
				ys = append(ys, s.Y[i])
			}
		}
	}
	var bandEdges []float64
	for _, b := range c.Bands {
		bandEdges = append(bandEdges, b.From, b.To)
	}
	ysc := newScale(c.Y, ys, nil)
	widest := 0.0
	for _, t := range ysc.ticks {
		widest = math.Max(widest, textWidth(ysc.label(t)))
	}
	left := math.Min(math.Max(52, 30+widest+6), chartWidth/4)
	xsc := newScale(c.X, xs, bandEdges)
	pad := 0.0
	if !c.X.Tight {
		pad = innerPad
	}
	x0, x1 := left, float64(chartWidth-plotRight)
	y0, y1 := float64(plotTop), float64(plotTop+plotHeight)
	xsc.p0, xsc.p1 = x0+pad, x1-pad
	var cats []float64
	if c.Bars {
		cats = c.categories()
		xsc = c.categoryScale(cats, x0, x1)
	}
	ysc.p0, ysc.p1 = y1, y0

	legend := c.legendItems()
	rows := layoutLegend(legend, x0, x1)
	legendTop := y1 + 48
	height := legendTop + float64(len(rows))*legendRow + 4

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="%s" viewBox="0 0 %d %s" role="img" aria-labelledby="%s-title" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, 'Liberation Sans', 'DejaVu Sans', sans-serif" font-size="11">`+"\n",
		esc(c.ID), chartWidth, num(height), esc(c.ID))
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`+"\n", esc(c.ID), esc(c.Title))
	fmt.Fprintf(&b, `<defs><clipPath id="%s-clip"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath>`,
		esc(c.ID), num(x0), num(y0), num(x1-x0), num(y1-y0))
	fmt.Fprintf(&b, `<pattern id="%s-ramp" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4f5f7"/><line x1="0" y1="0" x2="0" y2="6" stroke="#d5d9e0" stroke-width="2.5"/></pattern></defs>`+"\n", esc(c.ID))
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#ffffff" stroke="none"/>`+"\n", num(x0), num(y0), num(x1-x0), num(y1-y0))

	c.writeBands(&b, xsc, x0, x1, y0, y1)

	// Grid and tick labels.
	for _, t := range ysc.ticks {
		y := ysc.px(t)
		if y < y0-0.5 || y > y1+0.5 {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#000" stroke-opacity="0.1" stroke-width="1"/>`, num(x0), num(y), num(x1), num(y))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" fill="#333">%s</text>`+"\n", num(x0-6), num(y+4), esc(ysc.label(t)))
	}
	lastRight := math.Inf(-1)
	for _, t := range xsc.ticks {
		x := xsc.px(t)
		if x < x0-0.5 || x > x1+0.5 {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#000" stroke-opacity="0.06" stroke-width="1"/>`, num(x), num(y0), num(x), num(y1))
		lbl := xsc.label(t)
		w := textWidth(lbl)
		if x-w/2 < lastRight+4 {
			b.WriteString("\n")
			continue // would overlap the previous label
		}
		lastRight = x + w/2
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="#333">%s</text>`+"\n", num(x), num(y1+16), esc(lbl))
	}
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#888" stroke-width="1"/>`+"\n", num(x0), num(y0), num(x1-x0), num(y1-y0))
	fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="#222" font-size="12">%s</text>`+"\n", num((x0+x1)/2), num(y1+34), esc(c.X.title()))
	fmt.Fprintf(&b, `<text transform="translate(14 %s) rotate(-90)" text-anchor="middle" fill="#222" font-size="12">%s</text>`+"\n", num((y0+y1)/2), esc(c.Y.title()))

	// Lines, clipped to the plot, then markers on top.
	fmt.Fprintf(&b, `<g clip-path="url(#%s-clip)">`+"\n", esc(c.ID))
	if c.Bars {
		c.writeBars(&b, cats, xsc, ysc)
	}
	// A stacked chart fills its areas first, then draws each one's top as
	// a line, from the top of the pile down: where a series is zero its top
	// is the one below's, and the one below's color is what shows there. A
	// series that is zero throughout has no line of its own.
	var below []float64
	for i, s := range drawn {
		if c.Stacked && !s.Unstacked && !c.Bars {
			fmt.Fprintf(&b, `<path class="area" data-series="%s" d="%s" fill="%s" fill-opacity="0.45" stroke="none"/>`+"\n",
				esc(s.Name), c.area(s.X, s.Y, below, xsc, ysc), color(s.Color))
			below = drawn[i].Y
		}
	}
	var order, lines []int
	for i := range drawn {
		switch {
		case !c.Stacked || drawn[i].Unstacked:
			lines = append(lines, i) // drawn over the pile
		default:
			order = append([]int{i}, order...)
		}
	}
	order = append(order, lines...)
	for _, i := range order {
		s := drawn[i]
		if c.Bars || (c.Stacked && !s.Unstacked && !anyAbove(c.Series[i].Y, 0)) {
			continue
		}
		d, n := c.path(s, xsc, ysc)
		dash := dashAttr(s.Dash)
		fmt.Fprintf(&b, `<path class="series" data-series="%s" data-points="%d" d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"%s/>`+"\n",
			esc(s.Name), n, d, color(s.Color), dash)
	}
	b.WriteString("</g>\n")
	c.writeMarks(&b, xsc, x0, x1, y0, y1)
	for _, s := range drawn {
		// Bars carry their own titles; a stacked series' marker would show
		// the running sum, not its own value (the data table has both).
		if !c.Bars && !(c.Stacked && !s.Unstacked) {
			c.writeMarkers(&b, s, xsc, ysc)
		}
	}
	writeLegend(&b, rows, legendTop, c.ID)
	b.WriteString("</svg>")
	return b.String()
}

// noDataText says why a chart is not drawn.
const noDataText = "nothing to draw: no value of this chart is a finite number its axes can show"

// emptySVG is the figure of a chart with nothing to draw: its title and
// why it is empty, at the size of a legend row.
func (c *chart) emptySVG() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="%s" viewBox="0 0 %d 40" role="img" aria-labelledby="%s-title" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, 'Liberation Sans', 'DejaVu Sans', sans-serif" font-size="11">`+"\n",
		esc(c.ID), chartWidth, esc(c.ID))
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`+"\n", esc(c.ID), esc(c.Title))
	fmt.Fprintf(&b, `<text x="%d" y="24" fill="#56606e">%s</text>`+"\n", plotRight, esc(sentenceCase(noDataText)+"."))
	b.WriteString("</svg>")
	return b.String()
}

// markRows is how many rows of labels the marks may stack under the band
// labels before a label is left to its line's tooltip.
const markRows = 4

// writeMarks draws each mark inside the plot as a dashed vertical line,
// its label under the step's band label. Labels of marks close together
// (a history's changes run after run) would print over each other: each
// goes in the first row where it clears the label before it, and one that
// fits in no row is left out, its line's tooltip still saying it.
func (c *chart) writeMarks(b *strings.Builder, xsc scale, x0, x1, y0, y1 float64) {
	var rowEnds []float64 // the right edge of the last label in each row
	for _, m := range c.Marks {
		x := xsc.px(m.X)
		if math.IsNaN(x) || x < x0 || x > x1 {
			continue
		}
		fmt.Fprintf(b, `<line class="mark" data-mark="%s" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#2e7d32" stroke-width="1.5" stroke-dasharray="4 3"><title>%s</title></line>`+"\n",
			esc(m.Label), num(x), num(y0), num(x), num(y1), esc(m.Title))
		w := textWidth(m.Label)
		anchor, tx, from, to := "start", x+3, x+3, x+3+w
		if x+w+6 > x1 {
			anchor, tx, from, to = "end", x-3, x-3-w, x-3
		}
		row := -1
		for r, end := range rowEnds {
			if from > end+4 {
				row = r
				break
			}
		}
		if row < 0 && len(rowEnds) < markRows {
			row = len(rowEnds)
			rowEnds = append(rowEnds, 0)
		}
		if row < 0 {
			continue
		}
		rowEnds[row] = to
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="%s" fill="#2e7d32" font-size="10">%s</text>`+"\n", num(tx), num(y0+23+12*float64(row)), anchor, esc(m.Label))
	}
}

func (c *chart) writeBands(b *strings.Builder, xsc scale, x0, x1, y0, y1 float64) {
	measured := 0
	for _, bd := range c.Bands {
		from, to := math.Max(xsc.px(bd.From), x0), math.Min(xsc.px(bd.To), x1)
		if math.IsNaN(from) || math.IsNaN(to) || to <= from {
			continue
		}
		fill := "#e9edf3"
		if bd.Ramp {
			fill = "url(#" + esc(c.ID) + "-ramp)"
		} else {
			if measured%2 == 1 {
				fill = "#dde3eb"
			}
			measured++
		}
		fmt.Fprintf(b, `<rect class="band" data-band="%s" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`+"\n",
			esc(bd.Label), num(from), num(y0), num(to-from), num(y1-y0), fill, esc(bd.Label))
		if !bd.Ramp && bd.Label != "" && textWidth(bd.Label)*0.9+6 < to-from {
			fmt.Fprintf(b, `<text x="%s" y="%s" fill="#56606e" font-size="10">%s</text>`+"\n", num(from+3), num(y0+11), esc(bd.Label))
		}
	}
}

// path draws a series as one path, broken where a value is missing. Long
// series are decimated to the lowest and highest value of each pixel
// column, which keeps every peak visible.
func (c *chart) path(s series, xsc, ysc scale) (string, int) {
	type pt struct{ x, y float64 }
	var segs [][]pt
	var cur []pt
	n := 0
	for i := range s.X {
		if !c.plottable(s.X[i], s.Y[i]) {
			if len(cur) > 0 {
				segs = append(segs, cur)
				cur = nil
			}
			continue
		}
		n++
		cur = append(cur, pt{xsc.px(s.X[i]), ysc.px(s.Y[i])})
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	var b strings.Builder
	for _, seg := range segs {
		if len(seg) > int(math.Abs(xsc.p1-xsc.p0))*decimateAbove {
			var out []pt
			for i := 0; i < len(seg); {
				col := math.Floor(seg[i].x)
				lo, hi := seg[i], seg[i]
				j := i
				for ; j < len(seg) && math.Floor(seg[j].x) == col; j++ {
					if seg[j].y < lo.y {
						lo = seg[j]
					}
					if seg[j].y > hi.y {
						hi = seg[j]
					}
				}
				if lo.x <= hi.x {
					out = append(out, lo, hi)
				} else {
					out = append(out, hi, lo)
				}
				i = j
			}
			seg = out
		}
		for i, p := range seg {
			if i == 0 {
				b.WriteString("M")
			} else {
				b.WriteString(" L")
			}
			b.WriteString(num(p.x) + " " + num(p.y))
		}
		if len(seg) == 1 {
			b.WriteString(" h0") // a lone point still draws with round caps
		}
		b.WriteString(" ")
	}
	return strings.TrimSpace(b.String()), n
}

func (c *chart) writeMarkers(b *strings.Builder, s series, xsc, ysc scale) {
	n := 0
	for i := range s.X {
		if c.plottable(s.X[i], s.Y[i]) {
			n++
		}
	}
	if n == 0 || n > markerMax {
		return
	}
	fmt.Fprintf(b, `<g data-markers="%s" fill="%s">`, esc(s.Name), color(s.Color))
	for i := range s.X {
		if !c.plottable(s.X[i], s.Y[i]) {
			continue
		}
		xl := xsc.label(s.X[i])
		if !xsc.ticksGiven {
			xl = quantity(s.X[i])
		}
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3"><title>%s: %s %s → %s %s</title></circle>`,
			num(xsc.px(s.X[i])), num(ysc.px(s.Y[i])), esc(s.Name), esc(c.X.Label), esc(xl), esc(quantity(s.Y[i])), esc(c.Y.Unit))
	}
	b.WriteString("</g>\n")
}

// legendItem is one entry of the legend.
type legendItem struct {
	text  string
	color string
	dash  int
	ramp  bool
	step  bool
	x     float64
}

func (c *chart) legendItems() []legendItem {
	var items []legendItem
	for _, s := range c.Series {
		items = append(items, legendItem{text: s.Name, color: color(s.Color), dash: s.Dash})
	}
	ramp, step := false, false
	for _, b := range c.Bands {
		ramp = ramp || b.Ramp
		step = step || !b.Ramp
	}
	if step {
		items = append(items, legendItem{text: "measured step", step: true})
	}
	if ramp {
		items = append(items, legendItem{text: "ramp-up / warm-up", ramp: true})
	}
	return items
}

// layoutLegend flows the items into rows that fit between x0 and x1.
func layoutLegend(items []legendItem, x0, x1 float64) [][]legendItem {
	var rows [][]legendItem
	x := x0
	var row []legendItem
	for _, it := range items {
		w := 26 + textWidth(it.text) + 16
		if len(row) > 0 && x+w > x1 {
			rows = append(rows, row)
			row, x = nil, x0
		}
		it.x = x
		row = append(row, it)
		x += w
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

func writeLegend(b *strings.Builder, rows [][]legendItem, top float64, id string) {
	b.WriteString(`<g class="legend">`)
	for r, row := range rows {
		y := top + float64(r)*legendRow
		for _, it := range row {
			switch {
			case it.ramp:
				fmt.Fprintf(b, `<rect x="%s" y="%s" width="20" height="10" fill="url(#%s-ramp)" stroke="#c0c6cf"/>`, num(it.x), num(y-8), esc(id))
			case it.step:
				fmt.Fprintf(b, `<rect x="%s" y="%s" width="20" height="10" fill="#e9edf3" stroke="#c0c6cf"/>`, num(it.x), num(y-8))
			default:
				dash := dashAttr(it.dash)
				fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"%s/>`, num(it.x), num(y-3), num(it.x+20), num(y-3), it.color, dash)
			}
			fmt.Fprintf(b, `<text x="%s" y="%s" fill="#222">%s</text>`, num(it.x+26), num(y+1), esc(it.text))
		}
	}
	b.WriteString("</g>\n")
}

// dataTable is the table behind the chart: one row per x value, one column
// per series, blank where a series has no value at that x.
func (c *chart) dataTable() *table {
	t := &table{ID: c.ID, Title: c.Title + " (data)"}
	xName := c.X.Label
	if c.X.Unit != "" {
		xName += " (" + c.X.Unit + ")"
	}
	t.Columns = append(t.Columns, column{Name: xName})
	seen := map[float64]bool{}
	var xs []float64
	for _, s := range c.Series {
		unit := c.Y.Unit
		name := s.Name
		if unit != "" {
			name += " (" + unit + ")"
		}
		t.Columns = append(t.Columns, column{Name: name, Numeric: true})
		for _, x := range s.X {
			if !math.IsNaN(x) && !seen[x] {
				seen[x] = true
				xs = append(xs, x)
			}
		}
	}
	sort.Float64s(xs)
	index := make([]map[float64]float64, len(c.Series))
	for i, s := range c.Series {
		index[i] = map[float64]float64{}
		for j, x := range s.X {
			index[i][x] = s.Y[j]
		}
	}
	for _, x := range xs {
		xl := quantity(x)
		if c.X.Format != nil {
			xl = c.X.Format(x)
		}
		rx := x
		if c.X.Recorded != nil {
			rx = c.X.Recorded(x)
		}
		row := []cell{{Text: xl, Raw: raw(rx)}}
		for i := range c.Series {
			v, ok := index[i][x]
			if !ok || math.IsNaN(v) {
				row = append(row, cell{Text: "", Raw: ""})
				continue
			}
			row = append(row, cell{Text: quantity(v), Raw: raw(v)})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
