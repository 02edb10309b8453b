package report

import (
	"regexp"
	"strconv"
	"testing"
)

// Marks a run apart on a history's axis carry labels wider than the gap
// between them: each label is drawn where it clears every other, in rows
// under the band labels, and one that fits in no row is left to its
// line's tooltip.
func TestMarkLabelsDoNotOverlap(t *testing.T) {
	var xs, ys []float64
	for i := 1; i <= 40; i++ {
		xs, ys = append(xs, float64(i)), append(ys, 100)
	}
	c := &chart{ID: "trend", Title: "trend", X: axis{Label: "run", Integer: true, Tight: true}, Y: axis{Label: "tpm"},
		Series: []series{{Name: "a", X: xs, Y: ys}}}
	for i := 2; i <= 40; i += 2 {
		c.Marks = append(c.Marks, mark{X: float64(i), Label: "kernel 6.1.0-" + strconv.Itoa(i) + " +2", Title: "run " + strconv.Itoa(i)})
	}
	svg := c.SVG()
	lines := regexp.MustCompile(`<line class="mark"`).FindAllString(svg, -1)
	if len(lines) != len(c.Marks) {
		t.Fatalf("%d mark lines, want %d", len(lines), len(c.Marks))
	}
	type box struct{ from, to, y float64 }
	var boxes []box
	for _, m := range regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)" text-anchor="(start|end)" fill="#2e7d32" font-size="10">([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		w := textWidth(m[4])
		b := box{x, x + w, y}
		if m[3] == "end" {
			b = box{x - w, x, y}
		}
		for _, o := range boxes {
			if o.y == b.y && b.from < o.to && o.from < b.to {
				t.Errorf("label %q at %.0f-%.0f overlaps one at %.0f-%.0f on the same row", m[4], b.from, b.to, o.from, o.to)
			}
		}
		boxes = append(boxes, b)
	}
	rows := map[float64]bool{}
	for _, b := range boxes {
		rows[b.y] = true
	}
	if len(boxes) == 0 || len(rows) < 2 || len(rows) > markRows {
		t.Errorf("%d labels in %d rows, want labels stacked in 2 to %d rows", len(boxes), len(rows), markRows)
	}
}
