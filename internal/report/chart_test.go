package report

import (
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestLinearTicks(t *testing.T) {
	tests := []struct {
		lo, hi   float64
		integer  bool
		loose    bool
		want     []float64
		wantLoHi [2]float64
	}{
		{0, 87847, false, true, []float64{0, 20000, 40000, 60000, 80000, 100000}, [2]float64{0, 100000}},
		{0, 2.44, false, true, []float64{0, 0.5, 1, 1.5, 2, 2.5}, [2]float64{0, 2.5}},
		{0, 0.3, false, true, []float64{0, 0.1, 0.2, 0.3}, [2]float64{0, 0.3}},
		{1, 4, true, false, []float64{1, 2, 3, 4}, [2]float64{1, 4}},
		{1, 89, true, false, []float64{20, 40, 60, 80}, [2]float64{1, 89}},
		{2.48, 27.3, false, false, []float64{5, 10, 15, 20, 25}, [2]float64{2.48, 27.3}},
		{-3, 7, false, true, []float64{-4, -2, 0, 2, 4, 6, 8}, [2]float64{-4, 8}},
	}
	for _, tt := range tests {
		got, lo, hi, _ := linearTicks(tt.lo, tt.hi, 5, tt.integer, tt.loose)
		if !reflect.DeepEqual(got, tt.want) || lo != tt.wantLoHi[0] || hi != tt.wantLoHi[1] {
			t.Errorf("linearTicks(%g, %g, integer=%v, loose=%v) = %v on [%g, %g], want %v on %v",
				tt.lo, tt.hi, tt.integer, tt.loose, got, lo, hi, tt.want, tt.wantLoHi)
		}
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []float64
	}{
		{0.5, 30, []float64{0.5, 1, 2, 5, 10, 20}},
		{0.07, 120, []float64{0.1, 1, 10, 100}},
		{3, 9, []float64{5}},
		{1e-3, 1e6, []float64{0.001, 0.1, 10, 1000, 100000}}, // every other decade past six
		{1, 1e9, []float64{1, 100, 10000, 1e6, 1e8}},
	}
	for _, tt := range tests {
		if got := logTicks(tt.lo, tt.hi); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("logTicks(%g, %g) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestTickLabel(t *testing.T) {
	tests := []struct {
		v, step float64
		want    string
	}{
		{0, 20000, "0"},
		{40000, 20000, "40k"},
		{2500, 500, "2500"},
		{3000, 1000, "3k"},
		{1500000, 500000, "1.5M"},
		{0.25, 0.05, "0.25"},
		{1.5, 0.5, "1.5"},
		{10, 0, "10"},
		{0.001, 0, "0.001"},
		{20000, 0, "20k"},
	}
	for _, tt := range tests {
		if got := tickLabel(tt.v, tt.step); got != tt.want {
			t.Errorf("tickLabel(%g, %g) = %q, want %q", tt.v, tt.step, got, tt.want)
		}
	}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{thousands(1463290), "1,463,290"},
		{thousands(-1234.6), "-1,235"},
		{quantity(883.85), "884"},
		{quantity(43.92), "43.9"},
		{quantity(0.0712), "0.071"},
		{millis(0.7782), "0.778"},
		{millis(7.05), "7.05"},
		{millis(1113.3), "1,113"},
		{percent(37.83), "38"},
		{percent(0.42), "0.4"},
		{signedPercent(55.2), "+55 %"},
		{signedPercent(-56.4), "−56 %"},
		{signedPercent(0.04), "0.0 %"},
		{ratio(2), "2.0x"},
		{ratio(0.18), "0.18x"},
		{ratio(0.0053), "0.0053x"},
		{ratio(6.5), "6.5x"},
		{ratio(math.NaN()), "-"},
		// Figures from a damaged record stay a few characters long.
		{thousands(1e300), "1e+300"},
		{quantity(-1.7e308), "-1.7e+308"},
		{millis(1e20), "1e+20"},
		{percent(12345), "12,345"},
		{signedPercent(1e302), "> +999,900 %"},
		{signedPercent(-1e302), "< −999,900 %"},
		{ratio(1e300), "> 10,000x"},
		{ratio(math.Inf(1)), "-"},
		{ratio(1e-300), "< 0.0001x"},
		{ratio(-1e300), "< −10,000x"},
		{tickLabel(1e-9, 0), "1e-09"},
		{blockSize(4096), "4k"},
		{blockSize(1 << 20), "1m"},
		{blockSize(1536), "1536b"},
		{raw(math.NaN()), ""},
		{raw(1.5), "1.5"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func testChart() *chart {
	return &chart{
		ID: "c", Title: "TPM & NOPM <vs> users",
		X: usersAxis(), Y: axis{Label: "throughput", Unit: "tx/min", Zero: true},
		Series: []series{
			{Name: "TPM", X: []float64{1, 2, 3, 5}, Y: []float64{53031, 87847, math.NaN(), 120000}},
			{Name: "NOPM", X: []float64{1, 2, 3, 5}, Y: []float64{23717, 39438, 41000, 52000}, Color: 1, Dash: dashed},
			{Name: "empty", X: []float64{1, 2}, Y: []float64{math.NaN(), math.NaN()}, Color: 2},
		},
		Bands: []band{{From: 0.5, To: 1.5, Label: "ramp", Ramp: true}, {From: 1.5, To: 3, Label: "step one"}},
	}
}

func TestChartSVG(t *testing.T) {
	svg := testChart().SVG()
	if again := testChart().SVG(); again != svg {
		t.Fatal("the same chart rendered twice differs")
	}
	for _, bad := range []string{"NaN", "Inf", "<vs>"} {
		if strings.Contains(svg, bad) {
			t.Errorf("SVG contains %q", bad)
		}
	}
	// The missing value at 3 users breaks the TPM line in two.
	tpm := regexp.MustCompile(`data-series="TPM" data-points="3" d="(M[^"]*)"`).FindStringSubmatch(svg)
	if tpm == nil || strings.Count(tpm[1], "M") != 2 {
		t.Errorf("TPM path should have 3 points in 2 segments: %v", tpm)
	}
	if !strings.Contains(svg, `data-series="empty" data-points="0" d=""`) {
		t.Error("a series without values should still be named, with no points")
	}
	for _, want := range []string{`stroke-dasharray="6 4"`, `data-band="step one"`, `>ramp-up / warm-up<`, `>throughput (tx/min)<`, `>virtual users<`, `TPM &amp; NOPM &lt;vs&gt; users`} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %s", want)
		}
	}
}

func TestChartDecimatesLongSeries(t *testing.T) {
	c := &chart{ID: "long", X: axis{Label: "time", Unit: "s", Tight: true}, Y: axis{Label: "IOPS", Zero: true}}
	s := series{Name: "IOPS"}
	for i := range 20000 {
		s.X = append(s.X, float64(i))
		v := 1000.0
		if i == 12345 {
			v = 9000 // one spike that must survive
		}
		s.Y = append(s.Y, v)
	}
	c.Series = []series{s}
	svg := c.SVG()
	d := regexp.MustCompile(`\sd="([^"]*)"`).FindStringSubmatch(svg)[1]
	if n := strings.Count(d, "L"); n > 4000 {
		t.Errorf("path has %d segments for 20000 points; want it decimated to the plot width", n)
	}
	// 1000 sits near the bottom of a 0–10k axis; the spike reaches near the top.
	highest := math.Inf(1)
	for _, v := range regexp.MustCompile(`[ML]([0-9.]+) ([0-9.]+)`).FindAllStringSubmatch(d, -1) {
		y, _ := strconv.ParseFloat(v[2], 64)
		highest = math.Min(highest, y)
	}
	if highest > plotTop+0.2*plotHeight {
		t.Errorf("the spike was lost in decimation: highest point at y=%g", highest)
	}
}

func TestLogAxisLeavesOutNonPositiveValues(t *testing.T) {
	c := &chart{ID: "log", X: usersAxis(), Y: axis{Label: "latency", Unit: "ms", Log: true},
		Series: []series{{Name: "p99", X: []float64{1, 2, 3}, Y: []float64{0, 5, 500}}}}
	svg := c.SVG()
	if !strings.Contains(svg, `data-points="2"`) {
		t.Error("a zero on a log axis should be left out, not plotted")
	}
	for _, want := range []string{">10<", ">100<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("log axis lacks the tick %s", want)
		}
	}
}

func TestLongChartDataIsLinkedNotEmbedded(t *testing.T) {
	c := &chart{ID: "tl", Title: "IOPS per second", X: axis{Label: "time", Unit: "s", Tight: true}, Y: axis{Label: "IOPS"}}
	s := series{Name: "IOPS"}
	for i := range maxInlineRows + 1 {
		s.X, s.Y = append(s.X, float64(i)), append(s.Y, 100)
	}
	c.Series = []series{s}
	var b strings.Builder
	h := &htmlWriter{w: &b, csvDir: "csv"}
	h.chart(c)
	if n := strings.Count(b.String(), "<tr>"); n > 0 {
		t.Errorf("%d data rows embedded in the page", n)
	}
	if !strings.Contains(b.String(), `href="csv/tl.csv"`) {
		t.Error("the chart's data is not linked")
	}
}

// A stacked chart piles its series (CPU states adding up to 100 %) while
// its data table keeps each one's own values; an unstacked series stays a
// line of its own.
func TestStackedChartPilesSeriesAndKeepsTheirValues(t *testing.T) {
	c := &chart{ID: "cpu", Title: "CPU", X: usersAxis(), Y: percentAxis("CPU"), Stacked: true, Series: []series{
		{Name: "user", X: []float64{1, 2}, Y: []float64{30, 60}},
		{Name: "iowait", X: []float64{1, 2}, Y: []float64{math.NaN(), 25}},
		{Name: "idle", X: []float64{1, 2}, Y: []float64{70, 15}},
		{Name: "dbio", X: []float64{1, 2}, Y: []float64{5, 9}, Unstacked: true},
	}}
	tops := c.stackedTops()
	want := [][]float64{{30, 60}, {30, 85}, {100, 100}, {5, 9}}
	if !reflect.DeepEqual(tops, want) {
		t.Errorf("stacked tops %v, want %v", tops, want)
	}
	svg := c.SVG()
	if n := strings.Count(svg, `class="area"`); n != 3 {
		t.Errorf("%d areas, want 3 (the unstacked series is a line)", n)
	}
	if n := strings.Count(svg, `class="series"`); n != 4 {
		t.Errorf("%d lines, want 4 (each area's top, and the unstacked series)", n)
	}
	if !strings.Contains(svg, `class="series" data-series="dbio"`) {
		t.Error("the unstacked series is not drawn as a line")
	}
	rows := c.dataTable().Rows
	if rows[1][1].Text != "60.0" || rows[1][3].Text != "15.0" {
		t.Errorf("data table row %v does not keep each series' own value", rows[1])
	}
}

// Bars put one group per category, evenly spaced, one bar per series.
func TestBarChartGroupsBarsByCategory(t *testing.T) {
	c := &chart{ID: "bs", Title: "IOPS vs block size", Bars: true,
		X: axis{Label: "block size", Log: true, Format: func(v float64) string { return strconv.Itoa(int(v)/1024) + "k" }},
		Y: axis{Label: "IOPS", Zero: true}, Series: []series{
			{Name: "randread", X: []float64{4096, 65536}, Y: []float64{120000, 24000}},
			{Name: "randwrite", X: []float64{4096, 131072}, Y: []float64{127000, 9000}, Color: 1},
		}}
	svg := c.SVG()
	rect := regexp.MustCompile(`<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)" height="[0-9.]+"><title>([^:]+): (\w+)`)
	bars := rect.FindAllStringSubmatch(svg, -1)
	if len(bars) != 4 {
		t.Fatalf("%d bars, want 4:\n%s", len(bars), svg)
	}
	for _, label := range []string{">4k<", ">64k<", ">128k<"} {
		if !strings.Contains(svg, label) {
			t.Errorf("no category label %s", label)
		}
	}
	x := func(i int) float64 { v, _ := strconv.ParseFloat(bars[i][1], 64); return v }
	w, _ := strconv.ParseFloat(bars[0][2], 64)
	// randread at 4k, then randwrite at 4k right beside it.
	if bars[0][3] != "randread" || bars[0][4] != "4k" || bars[2][3] != "randwrite" || bars[2][4] != "4k" || math.Abs(x(2)-x(0)-w) > 0.01 {
		t.Errorf("4k group: %v and %v", bars[0][1:], bars[2][1:])
	}
}
