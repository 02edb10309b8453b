package report

import "strings"

// A report is built once as a document (sections of paragraphs, tables and
// charts) and then written out as HTML, Markdown and CSV, so that the three
// always say the same thing.

// document is a whole report.
type document struct {
	Title    string
	Subtitle string
	// Facts are the short label/value lines under the title.
	Facts []fact
	// Alerts are shown first: failed checks, refused-but-forced
	// comparisons, interrupted runs.
	Alerts   []alert
	Sections []*section
	// Footer says what rendered the report, and when.
	Footer string
}

type fact struct{ Label, Value string }

// alert is a banner; Level is "error", "warning" or "info".
type alert struct{ Level, Text string }

// section is a titled part of the report; sections nest one level.
type section struct {
	ID     string
	Title  string
	Blocks []block
	Subs   []*section
}

// block is one of *paragraph, *bullets, *table, *chart, *keyValues.
type block any

// paragraph is prose; Class "verdict" or "note" styles it.
type paragraph struct {
	Text  string
	Class string
}

// bullets is a list of short statements.
type bullets struct{ Items []string }

// keyValues is a two-column listing (environment, configuration).
type keyValues struct {
	ID    string
	Title string
	Pairs []fact
}

// column is a table column; Numeric columns align right.
type column struct {
	Name    string
	Numeric bool
	// Group is a heading over consecutive columns with the same group.
	Group string
	// Wrap lets long text (verdicts, paths) wrap; other cells keep to one line.
	Wrap bool
}

// cell is one table cell: Text is shown, Raw goes to CSV (full precision,
// no separators). Class marks comparisons: "better", "worse".
type cell struct {
	Text  string
	Raw   string
	Class string
}

// table is a table of the report; every table is also exported as CSV.
type table struct {
	ID      string
	Title   string
	Caption string
	Columns []column
	Rows    [][]cell
	// Foot rows (averages) are set apart under the body.
	Foot [][]cell
	// Collapsed tables are shown on demand.
	Collapsed bool
}

// flatHeader names the columns on one line (Markdown, CSV): a column takes
// its group's name in front where its own name is ambiguous or the group
// carries the unit ("latency (ms) p99").
func (t *table) flatHeader() []string {
	count := map[string]int{}
	for _, c := range t.Columns {
		count[c.Name]++
	}
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
		if c.Group != "" && (count[c.Name] > 1 || strings.Contains(c.Group, "(")) {
			out[i] = c.Group + " " + c.Name
		}
	}
	return out
}

// textCell is a cell whose CSV value is its text.
func textCell(s string) cell { return cell{Text: s, Raw: s} }

// numCell shows v with format and exports it at full precision.
func numCell(v float64, format func(float64) string) cell {
	return cell{Text: format(v), Raw: raw(v)}
}

// add appends blocks; a chart whose every value is zero, a flat line on
// its axis, is said in a sentence instead (a chart that draws a zero where
// there was data to draw keeps its line: it has other values).
func (s *section) add(b ...block) {
	for _, x := range b {
		if c, ok := x.(*chart); ok && c.hasData() && c.allZero() {
			x = &paragraph{Class: "note", Text: sentenceCase(c.Title) + ": every value was zero, so there is no chart."}
		}
		s.Blocks = append(s.Blocks, x)
	}
}

func (s *section) sub(id, title string) *section {
	c := &section{ID: id, Title: title}
	s.Subs = append(s.Subs, c)
	return c
}

func (s *section) empty() bool {
	if len(s.Blocks) > 0 {
		return false
	}
	for _, c := range s.Subs {
		if !c.empty() {
			return false
		}
	}
	return true
}

// blocks calls each with every block of the document, in document order.
func (d *document) blocks(each func(block)) {
	var walk func(s *section)
	walk = func(s *section) {
		for _, b := range s.Blocks {
			each(b)
		}
		for _, c := range s.Subs {
			walk(c)
		}
	}
	for _, s := range d.Sections {
		walk(s)
	}
}

// tables lists every table of the document, those behind charts included,
// in document order.
func (d *document) tables() []*table {
	var out []*table
	d.blocks(func(b block) {
		switch v := b.(type) {
		case *table:
			out = append(out, v)
		case *chart:
			out = append(out, v.dataTable())
		case *keyValues:
			t := &table{ID: v.ID, Title: v.Title, Columns: []column{{Name: "item"}, {Name: "value"}}}
			for _, p := range v.Pairs {
				t.Rows = append(t.Rows, []cell{textCell(p.Label), textCell(p.Value)})
			}
			out = append(out, t)
		}
	})
	return out
}

// charts lists every chart of the document in order.
func (d *document) charts() []*chart {
	var out []*chart
	d.blocks(func(b block) {
		if c, ok := b.(*chart); ok {
			out = append(out, c)
		}
	})
	return out
}
