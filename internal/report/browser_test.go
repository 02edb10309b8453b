package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/testenv"
)

// The browser test opens real reports in headless Chromium (Debian's
// chromium package): the page must load with no console message (Chromium
// logs SVG attribute errors such as a NaN coordinate there), every chart
// must be in the rendered DOM with a drawn path for each of its series, and
// each series must be visible, in its color, in a screenshot.

// chromiumArgs keep the browser off the network and away from any profile.
func chromiumArgs(profile string, extra ...string) []string {
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0"}
	return append(args, extra...)
}

type browser struct {
	t    *testing.T
	path string
	dir  string
	runs int
}

// run runs Chromium on a page and returns what it printed and the console
// messages it logged.
func (b *browser) run(page string, extra ...string) (stdout []byte, console []string) {
	b.t.Helper()
	b.runs++
	profile := filepath.Join(b.dir, fmt.Sprintf("profile-%d", b.runs))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := execx.Real{}.Run(ctx, execx.Cmd{Name: b.path, Args: chromiumArgs(profile, append(extra, "file://"+page)...)})
	if err != nil {
		b.t.Fatalf("chromium on %s: %v", page, err)
	}
	for _, line := range strings.Split(string(res.Stderr), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			console = append(console, line)
		}
	}
	return res.Stdout, console
}

func findChromium(t *testing.T) *browser {
	t.Helper()
	path := testenv.RequireProgram(t, "chromium", testenv.InstallChromium)
	return &browser{t: t, path: path, dir: t.TempDir()}
}

func TestReportRendersInChromium(t *testing.T) {
	b := findChromium(t)

	// The harness must see console messages, or "no console errors" proves nothing.
	probe := filepath.Join(b.dir, "probe.html")
	if err := os.WriteFile(probe, []byte(`<!DOCTYPE html><html><body><svg viewBox="0 0 10 10"><path d="M1 1 L" stroke="red"/></svg></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, console := b.run(probe, "--dump-dom"); len(console) == 0 {
		t.Fatal("chromium logged no console message for a broken SVG path: the console check cannot work with this chromium")
	}

	// What the reader must see on each page, in the rendered DOM.
	pages := []struct {
		name    string
		runs    []string
		compare bool
		sees    []*regexp.Regexp
	}{
		{"run", []string{"quick-ext4"}, false, []*regexp.Regexp{
			regexp.MustCompile(`(?s)data-chart="tpcc-cpu-vs-users".*?<path class="area" data-series="iowait"`), // CPU states stacked
			regexp.MustCompile(`TPC-C drove [0-9,]+ writes/s on vda at 1 user: 12 % of the`),                   // quick's halves joined
			regexp.MustCompile(`(?s)data-chart="fio-iops-vs-bs".*?<g class="bars"`),                            // block sizes as bars
			regexp.MustCompile(`(?s)data-chart="fio-iops-vs-bs".*?>4k random<.*?>128k sequential<`),            // every corner in one chart
		}},
		{"diskspd", []string{"disk-diskspd-a"}, false, []*regexp.Regexp{
			regexp.MustCompile(`(?s)Reads and writes of the mixed points <a.*?>write</td>.*?>total</td>`), // the split of a -w30 point
			regexp.MustCompile(`(?s)as DiskSpd prints them <a.*?>8-nines</td>`),                           // DiskSpd's ladder
			regexp.MustCompile(`(?s)data-chart="fio-spectrum".*?>99.9%<.*?data-series="write"`),           // the spectrum on the nines
		}},
		{"spectrum", []string{"tpcc-sqlite-histograms"}, false, []*regexp.Regexp{
			regexp.MustCompile(`(?s)data-chart="tpcc-spectrum".*?>90%<.*?data-series="users-1".*?data-series="users-2"`), // a line per step
		}},
		{"compare-diskspd", []string{"disk-diskspd-a", "disk-diskspd-b"}, true, []*regexp.Regexp{
			regexp.MustCompile(`(?s)data-chart="cmp-fio-spectrum-1".*?data-series="B"`), // the runs' spectra overlaid
		}},
		{"postgres", []string{"tpcc-postgres"}, false, []*regexp.Regexp{
			regexp.MustCompile(`data-chart="tpcc-engine-log-timeline"`), // the engine's own counters charted
			regexp.MustCompile(`data-chart="tpcc-engine-cache-timeline"`),
		}},
		{"fio", []string{"disk-curve"}, false, nil},
		{"throttled", []string{"quick-limited"}, false, []*regexp.Regexp{
			regexp.MustCompile(`class="subtitle">[^<]*ext4 on vda \(rotational\), capped at 500 read IOPS / 300 write IOPS`), // the limit where the storage is named
		}},
		{"compare", []string{"quick-ext4", "quick-tmpfs"}, true, []*regexp.Regexp{
			regexp.MustCompile(`A: ext4 on vda \(rotational\); B: tmpfs, no block device`), // every run's storage in the header
			regexp.MustCompile(`<td[^>]*>−[0-9]+ %, better</td>`),                          // a latency that fell, in words
		}},
	}
	// Every page's charts are screenshot together, a few galleries for all
	// pages, and one page is screenshot whole: each Chromium start costs
	// seconds, and the DOM dump of each page already checks what it holds.
	var gallery []galleryChart
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			b.t = t
			loaded := load(t, p.runs...)
			out := OutputAt(filepath.Join(b.dir, p.name+".html"))
			views := viewsOf(loaded, testOptions())
			var doc *document
			if p.compare {
				refusal, warnings := comparability(views)
				doc, _ = compareDocument(views, refusal.Reasons(), warnings, testOptions())
			} else {
				doc = runDocument(views, testOptions())
			}
			if err := out.write(doc); err != nil {
				t.Fatal(err)
			}
			page, err := os.ReadFile(out.HTML)
			if err != nil {
				t.Fatal(err)
			}
			checkSelfContained(t, page)

			dom, console := b.run(out.HTML, "--dump-dom")
			for _, c := range console {
				t.Errorf("console message while loading %s: %s", out.HTML, c)
			}
			checkChartsInDOM(t, dom, doc.charts())
			for _, want := range p.sees {
				if !want.Match(dom) {
					t.Errorf("the rendered page does not show %s", want)
				}
			}
			for _, c := range doc.charts() {
				gallery = append(gallery, galleryChart{page: p.name, chart: c})
			}
			if p.name != pages[0].name {
				return
			}
			shot := filepath.Join(b.dir, p.name+".png")
			if _, console := b.run(out.HTML, "--window-size=1280,2400", "--screenshot="+shot); len(console) > 0 {
				t.Errorf("console messages while rendering %s: %v", out.HTML, console)
			}
			checkNotBlank(t, shot)
		})
	}
	b.t = t
	for i := 0; i < len(gallery); i += galleryCharts {
		checkSeriesVisible(t, b, gallery[i:min(i+galleryCharts, len(gallery))], fmt.Sprintf("gallery-%d", i/galleryCharts+1))
	}
}

// galleryCharts bounds one gallery screenshot to 16 rows of charts (7,680
// pixels), well inside the size Chromium renders in one piece.
const galleryCharts = 32

// galleryChart is a chart of one of the pages, kept for the screenshot of
// all pages' charts.
type galleryChart struct {
	page  string
	chart *chart
}

// checkSelfContained fails on anything the page would fetch: scripts,
// remote styles, fonts or images.
func checkSelfContained(t *testing.T, page []byte) {
	t.Helper()
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<script`),
		regexp.MustCompile(`(?i)\bsrc\s*=`),
		regexp.MustCompile(`(?i)<link\b`),
		regexp.MustCompile(`(?i)@import|@font-face|url\(\s*['"]?(https?:|//)`),
		regexp.MustCompile(`(?i)href\s*=\s*"(https?:)?//`),
	} {
		if loc := bad.FindIndex(page); loc != nil {
			t.Errorf("the report is not self-contained: %q at byte %d", page[loc[0]:min(loc[1]+40, len(page))], loc[0])
		}
	}
}

var (
	svgBlock = regexp.MustCompile(`(?s)<svg[^>]*data-chart="([^"]+)"[^>]*>(.*?)</svg>`)
	// barGroup is one series of a bar chart: its name, fill opacity and rects.
	barGroup  = regexp.MustCompile(`(?s)<g class="bars" data-series="([^"]*)"[^>]*fill-opacity="([0-9.]+)"[^>]*>(.*?)</g>`)
	barRect   = regexp.MustCompile(`<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"`)
	pathTag   = regexp.MustCompile(`<path[^>]*class="series"[^>]*>`)
	attrValue = func(tag, name string) string {
		m := regexp.MustCompile(`\s` + name + `="([^"]*)"`).FindStringSubmatch(tag)
		if m == nil {
			return ""
		}
		return m[1]
	}
)

// unescape undoes the entities esc writes (the DOM dump uses the same ones).
func unescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&quot;", `"`, "&#39;", "'").Replace(s)
}

// checkChartsInDOM checks that each chart is in the rendered DOM with one
// drawn path per series that has data.
func checkChartsInDOM(t *testing.T, dom []byte, charts []*chart) {
	t.Helper()
	found := map[string]string{}
	for _, m := range svgBlock.FindAllSubmatch(dom, -1) {
		found[string(m[1])] = string(m[2])
	}
	if len(charts) == 0 {
		t.Fatal("the document has no chart")
	}
	for _, c := range charts {
		body, ok := found[c.ID]
		if !ok {
			t.Errorf("chart %s is not in the rendered page", c.ID)
			continue
		}
		drawn := map[string]bool{}
		for _, g := range barGroup.FindAllStringSubmatch(body, -1) {
			if strings.Contains(g[3], "<rect") {
				drawn[unescape(g[1])] = true
			}
		}
		for _, tag := range pathTag.FindAllString(body, -1) {
			n, _ := strconv.Atoi(attrValue(tag, "data-points"))
			if n > 0 && strings.HasPrefix(attrValue(tag, "d"), "M") {
				drawn[unescape(attrValue(tag, "data-series"))] = true
			}
		}
		for _, s := range c.Series {
			if seriesHasData(c, s) && !drawn[s.Name] {
				t.Errorf("chart %s: series %q has data but no drawn path in the rendered page", c.ID, s.Name)
			}
		}
	}
}

func seriesHasData(c *chart, s series) bool {
	if c.Stacked && !s.Unstacked {
		// A layer thinner than two pixels of a fixed axis shows nothing.
		least := 0.0
		if c.Y.Fixed {
			least = 2 * (c.Y.Max - c.Y.Min) / plotHeight
		}
		return anyAbove(s.Y, least)
	}
	for i := range s.X {
		if c.plottable(s.X[i], s.Y[i]) {
			return true
		}
	}
	return false
}

// checkNotBlank fails on a screenshot that is (nearly) all one color.
func checkNotBlank(t *testing.T, path string) {
	t.Helper()
	img := decodePNG(t, path)
	b := img.Bounds()
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 < 200 || g>>8 < 200 || bl>>8 < 200 {
				ink++
			}
		}
	}
	if ink < 2000 {
		t.Errorf("screenshot %s is nearly blank (%d dark pixels sampled)", path, ink)
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	return img
}

// Gallery geometry: every chart at its natural size (1 SVG unit = 1 pixel),
// two per row, each in a fixed cell, so that the screenshot can be read
// chart by chart.
const (
	cellWidth  = chartWidth
	cellHeight = 480
	columns    = 2
)

var vertex = regexp.MustCompile(`[ML](-?[0-9.]+) (-?[0-9.]+)`)

// checkSeriesVisible screenshots the charts in a grid and checks, for each
// series with data, that its color is on screen near one of its vertices.
func checkSeriesVisible(t *testing.T, b *browser, charts []galleryChart, name string) {
	t.Helper()
	var page bytes.Buffer
	page.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0;background:#fff}` +
		`div{position:absolute;overflow:hidden;width:` + strconv.Itoa(cellWidth) + `px;height:` + strconv.Itoa(cellHeight) + `px}` +
		`svg{display:block;width:` + strconv.Itoa(cellWidth) + `px;height:auto}</style></head><body>` + "\n")
	svgs := make([]string, len(charts))
	for i, c := range charts {
		svgs[i] = c.chart.SVG()
		fmt.Fprintf(&page, `<div style="left:%dpx;top:%dpx">%s</div>`+"\n", (i%columns)*cellWidth, (i/columns)*cellHeight, svgs[i])
	}
	page.WriteString("</body></html>\n")
	gallery := filepath.Join(b.dir, name+"-gallery.html")
	if err := os.WriteFile(gallery, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := (len(charts) + columns - 1) / columns
	shot := filepath.Join(b.dir, name+"-gallery.png")
	if _, console := b.run(gallery, fmt.Sprintf("--window-size=%d,%d", columns*cellWidth, rows*cellHeight), "--screenshot="+shot); len(console) > 0 {
		t.Errorf("console messages while rendering the charts: %v", console)
	}
	img := decodePNG(t, shot)
	for i, g := range charts {
		c := g.chart
		ox, oy := (i%columns)*cellWidth, (i/columns)*cellHeight
		paths := pathTag.FindAllString(svgs[i], -1)
		for _, s := range c.Series {
			if !seriesHasData(c, s) {
				continue
			}
			var d string
			for _, tag := range paths {
				if unescape(attrValue(tag, "data-series")) == s.Name {
					d = attrValue(tag, "d")
				}
			}
			want := parseHex(color(s.Color))
			if c.Bars {
				d, want = barCenters(svgs[i], s.Name, want)
			}
			seen := false
			for _, v := range vertex.FindAllStringSubmatch(d, 400) {
				x, _ := strconv.ParseFloat(v[1], 64)
				y, _ := strconv.ParseFloat(v[2], 64)
				if colorNear(img, ox+int(x+0.5), oy+int(y+0.5), want) {
					seen = true
					break
				}
			}
			if !seen {
				t.Errorf("%s page, chart %s: series %q (%s) is not visible at any of its points in the screenshot %s", g.page, c.ID, s.Name, color(s.Color), shot)
			}
		}
	}
}

// barCenters are the centers of a bar series' rects, written as path
// vertices, and its color as drawn (blended with the white behind it).
func barCenters(svg, name string, rgb [3]int) (string, [3]int) {
	var d strings.Builder
	for _, g := range barGroup.FindAllStringSubmatch(svg, -1) {
		if unescape(g[1]) != name {
			continue
		}
		op, _ := strconv.ParseFloat(g[2], 64)
		for k := range rgb {
			rgb[k] = int(float64(rgb[k])*op + 255*(1-op) + 0.5)
		}
		for _, r := range barRect.FindAllStringSubmatch(g[3], -1) {
			var v [4]float64
			for k := range v {
				v[k], _ = strconv.ParseFloat(r[k+1], 64)
			}
			fmt.Fprintf(&d, "M%g %g ", v[0]+v[2]/2, v[1]+v[3]/2)
		}
	}
	return d.String(), rgb
}

func parseHex(h string) [3]int {
	v, _ := strconv.ParseUint(strings.TrimPrefix(h, "#"), 16, 32)
	return [3]int{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)}
}

// colorNear looks for the color in the 7×7 pixels around (x, y); the
// tolerance absorbs anti-aliasing at the edge of a 2-pixel line.
func colorNear(img image.Image, x, y int, want [3]int) bool {
	for dy := -3; dy <= 3; dy++ {
		for dx := -3; dx <= 3; dx++ {
			r, g, b, _ := img.At(x+dx, y+dy).RGBA()
			got := [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
			diff := 0
			for k := range got {
				diff += max(got[k]-want[k], want[k]-got[k])
			}
			if diff <= 45 {
				return true
			}
		}
	}
	return false
}
