package report

import (
	"strings"
	"testing"
)

// A run's report draws no chart of zeros (a sentence says what it would
// have shown), and what the machine did per step is two tables a page
// holds, CPU and processes, then each device's I/O, not one of 23 columns.
func TestRunReportHasNoFlatChartsAndTablesThatFit(t *testing.T) {
	doc := runDocument(viewsOf(load(t, "tpcc-postgres"), testOptions()), testOptions())
	for _, c := range doc.charts() {
		if c.hasData() && c.allZero() {
			t.Errorf("chart %s draws only zeros", c.ID)
		}
		if c.ID == "tpcc-engine-sync-timeline" {
			t.Errorf("the checkpoints chart is drawn though no checkpoint ran")
		}
	}
	said := false
	doc.blocks(func(b block) {
		if p, ok := b.(*paragraph); ok && strings.HasPrefix(p.Text, "No checkpoint ran and no fsync was counted during the steps") {
			said = true
		}
	})
	if !said {
		t.Error("no sentence says that no checkpoint ran")
	}
	const widest = 13
	found := map[string]int{}
	for _, tb := range doc.tables() {
		if tb.ID == "tpcc-system-steps" || tb.ID == "tpcc-storage-steps" {
			found[tb.ID] = len(tb.Columns)
			if len(tb.Columns) > widest {
				t.Errorf("table %s has %d columns, more than the %d a page holds", tb.ID, len(tb.Columns), widest)
			}
		}
	}
	if len(found) != 2 {
		t.Errorf("the CPU and storage tables are %v, want both", found)
	}
}

// Any chart of zeros added to a section becomes a sentence; a chart with
// one value above zero stays a chart.
func TestFlatChartsBecomeSentences(t *testing.T) {
	flat := &chart{ID: "flat", Title: "checkpoints per second", X: axis{}, Y: axis{Zero: true},
		Series: []series{{Name: "checkpoints", X: []float64{1, 2, 3}, Y: []float64{0, 0, 0}}}}
	live := &chart{ID: "live", Title: "fsyncs per second", X: axis{}, Y: axis{Zero: true},
		Series: []series{{Name: "fsyncs", X: []float64{1, 2, 3}, Y: []float64{0, 2, 0}}}}
	sec := &section{}
	sec.add(flat, live)
	if p, ok := sec.Blocks[0].(*paragraph); !ok || !strings.HasPrefix(p.Text, "Checkpoints per second: every value was zero") {
		t.Errorf("the flat chart is %#v, want a sentence", sec.Blocks[0])
	}
	if _, ok := sec.Blocks[1].(*chart); !ok {
		t.Errorf("the chart with a value is %#v, want the chart", sec.Blocks[1])
	}
}
