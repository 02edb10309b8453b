package report

import (
	"fmt"
	"io"
	"path"
	"strings"
)

// generatorMark is in every HTML report dbio writes; dbio overwrites only
// files that carry it.
const generatorMark = `<meta name="generator" content="dbio report">`

// css is the whole style sheet: system fonts only, tabular figures, and a
// print layout that keeps each chart on one page.
const css = `
:root { --ink:#1d232b; --muted:#5b6573; --rule:#d9dde3; --soft:#f5f6f8; --accent:#1f4e8c; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1240px; padding: 24px 28px 48px; color: var(--ink); background: #fff;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", "DejaVu Sans", sans-serif; }
header { border-bottom: 3px solid var(--accent); padding-bottom: 12px; margin-bottom: 16px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 10px; padding-top: 10px; border-top: 1px solid var(--rule); color: var(--accent); }
h3 { font-size: 16px; margin: 24px 0 8px; }
h4, h5 { font-size: 14px; margin: 18px 0 6px; }
.subtitle { color: var(--muted); margin: 0 0 10px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.alert { border-left: 4px solid; padding: 8px 12px; margin: 10px 0; border-radius: 2px; }
.alert-error { border-color: #b3261e; background: #fce8e6; }
.alert-warning { border-color: #b06000; background: #fef7e0; }
.alert-info { border-color: var(--accent); background: #e8f0fe; }
nav.toc { background: var(--soft); padding: 8px 14px; border-radius: 4px; margin: 14px 0; }
nav.toc ol { margin: 4px 0; padding-left: 20px; columns: 2; }
nav.toc a { color: var(--accent); text-decoration: none; }
ul.findings li { margin: 3px 0; }
p.note { color: var(--muted); margin: 6px 0; }
p.verdict { background: var(--soft); border-left: 3px solid var(--accent); padding: 6px 10px; }
.table-wrap { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: 2px 0 6px; caption-side: top; }
th, td { padding: 3px 7px; border-bottom: 1px solid #e6e8ec; vertical-align: top; white-space: nowrap; }
td.wrap { white-space: normal; min-width: 16em; }
thead th { background: var(--soft); border-bottom: 1px solid #c4c9d1; font-weight: 600; text-align: left; white-space: nowrap; }
thead th.group { text-align: center; border-bottom: 1px solid #c4c9d1; border-left: 1px solid #fff; }
th.num, td.num { text-align: right; white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fafbfc; }
tfoot td { border-top: 2px solid #c4c9d1; font-weight: 600; }
td.key { font-weight: 700; }
td.better { color: #0d652d; background: #e6f4ea !important; }
td.worse { color: #a50e0e; background: #fce8e6 !important; }
td.verdict-io, td.verdict-storage, td.verdict-storage_sync, td.verdict-storage_read, td.verdict-storage_write, td.verdict-memory { background: #fce8e6 !important; }
td.verdict-cpu, td.verdict-steal, td.verdict-cpu_server, td.verdict-cpu_dbio, td.verdict-cpu_other { background: #fef1e0 !important; }
td.verdict-balanced, td.verdict-lock { background: #fef7e0 !important; }
p.caption { color: var(--muted); font-size: 12.5px; margin: 2px 0 0; }
div.kv { display: inline-block; vertical-align: top; margin-right: 28px; max-width: 100%; }
table.kv td:first-child { color: var(--muted); padding-right: 18px; }
table.kv td { border-bottom: 1px solid #eef0f3; white-space: normal; }
caption { white-space: nowrap; }
figure { margin: 16px 0 22px; padding: 10px 12px 8px; border: 1px solid var(--rule); border-radius: 4px; break-inside: avoid; page-break-inside: avoid; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg.chart { display: block; width: 100%; height: auto; }
details { margin: 6px 0; }
details > summary { cursor: pointer; color: var(--accent); font-size: 13px; }
a.csv { font-size: 12px; color: var(--muted); margin-left: 8px; }
footer { margin-top: 40px; padding-top: 10px; border-top: 1px solid var(--rule); color: var(--muted); font-size: 12px; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  nav.toc, a.csv, details.data { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  .table-wrap { overflow: visible; }
  table { font-size: 10px; }
  td.better, td.worse { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
`

// maxInlineRows is the most rows of chart data the page embeds; longer
// data (a timeline of hours) is linked to its CSV file instead.
const maxInlineRows = 1800

// htmlWriter writes a document as one self-contained page.
type htmlWriter struct {
	w   io.Writer
	err error
	// csvDir is the CSV directory relative to the page, for the links
	// beside each table; empty for none.
	csvDir string
}

func (h *htmlWriter) printf(format string, a ...any) {
	if h.err == nil {
		_, h.err = fmt.Fprintf(h.w, format, a...)
	}
}

func (h *htmlWriter) str(s string) {
	if h.err == nil {
		_, h.err = io.WriteString(h.w, s)
	}
}

// writeHTML writes d as HTML.
func writeHTML(w io.Writer, d *document, csvDir string) error {
	h := &htmlWriter{w: w, csvDir: csvDir}
	h.str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	h.str(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n" + generatorMark + "\n")
	h.printf("<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n", esc(d.Title), css)
	h.printf("<header>\n<h1>%s</h1>\n", esc(d.Title))
	if d.Subtitle != "" {
		h.printf("<p class=\"subtitle\">%s</p>\n", esc(d.Subtitle))
	}
	if len(d.Facts) > 0 {
		h.str("<dl class=\"facts\">\n")
		for _, f := range d.Facts {
			h.printf("<dt>%s</dt><dd>%s</dd>\n", esc(f.Label), esc(f.Value))
		}
		h.str("</dl>\n")
	}
	h.str("</header>\n")
	for _, a := range d.Alerts {
		h.printf("<div class=\"alert alert-%s\">%s</div>\n", esc(a.Level), esc(a.Text))
	}
	h.str("<nav class=\"toc\"><strong>Contents</strong>\n<ol>\n")
	for _, s := range d.Sections {
		h.printf("<li><a href=\"#%s\">%s</a></li>\n", esc(s.ID), esc(s.Title))
	}
	h.str("</ol>\n</nav>\n<main>\n")
	for _, s := range d.Sections {
		h.section(s, 2)
	}
	h.str("</main>\n")
	if d.Footer != "" {
		h.printf("<footer>%s</footer>\n", esc(d.Footer))
	}
	h.str("</body>\n</html>\n")
	return h.err
}

func (h *htmlWriter) section(s *section, level int) {
	if s.empty() {
		return
	}
	level = min(level, 5)
	h.printf("<section id=\"%s\">\n<h%d>%s</h%d>\n", esc(s.ID), level, esc(s.Title), level)
	for _, b := range s.Blocks {
		switch v := b.(type) {
		case *paragraph:
			if v.Class != "" {
				h.printf("<p class=\"%s\">%s</p>\n", esc(v.Class), esc(v.Text))
			} else {
				h.printf("<p>%s</p>\n", esc(v.Text))
			}
		case *bullets:
			class := ""
			if s.ID == "summary" || strings.HasSuffix(s.ID, "-summary") {
				class = ` class="findings"`
			}
			h.printf("<ul%s>\n", class)
			for _, it := range v.Items {
				h.printf("<li>%s</li>\n", esc(it))
			}
			h.str("</ul>\n")
		case *keyValues:
			h.printf("<div class=\"table-wrap kv\" id=\"%s\"><table class=\"kv\"><caption>%s%s</caption>\n<tbody>\n", esc(v.ID), esc(v.Title), h.csvLink(v.ID))
			for _, p := range v.Pairs {
				h.printf("<tr><td>%s</td><td>%s</td></tr>\n", esc(p.Label), esc(p.Value))
			}
			h.str("</tbody></table></div>\n")
		case *table:
			if v.Collapsed {
				h.printf("<details class=\"table-details\"><summary>%s (%s)</summary>\n", esc(v.Title), plural(len(v.Rows), "row", "rows"))
				h.table(v, true)
				h.str("</details>\n")
			} else {
				h.table(v, true)
			}
		case *chart:
			h.chart(v)
		}
	}
	for _, c := range s.Subs {
		h.section(c, level+1)
	}
	h.str("</section>\n")
}

func (h *htmlWriter) csvLink(id string) string {
	if h.csvDir == "" || id == "" {
		return ""
	}
	return fmt.Sprintf(` <a class="csv" href="%s">CSV</a>`, esc(path.Join(h.csvDir, id+".csv")))
}

func (h *htmlWriter) chart(c *chart) {
	h.printf("<figure id=\"%s\">\n<figcaption>%s</figcaption>\n", esc(c.ID), esc(c.Title))
	h.str(c.SVG())
	h.str("\n")
	if c.Note != "" {
		h.printf("<p class=\"note\">%s</p>\n", esc(c.Note))
	}
	t := c.dataTable()
	if len(t.Rows) > maxInlineRows && h.csvDir != "" {
		// Hours of per-second rows would make the page heavy; they are in the CSV.
		h.printf("<p class=\"note\">Data behind the chart: %s in <a href=\"%s\">%s</a>.</p>\n</figure>\n",
			plural(len(t.Rows), "row", "rows"), esc(path.Join(h.csvDir, t.ID+".csv")), esc(path.Join(h.csvDir, t.ID+".csv")))
		return
	}
	h.printf("<details class=\"data\"><summary>Data behind the chart (%s)</summary>\n", plural(len(t.Rows), "row", "rows"))
	h.table(t, false)
	h.str("</details>\n</figure>\n")
}

func (h *htmlWriter) table(t *table, withCaption bool) {
	if withCaption {
		h.printf("<div class=\"table-wrap\"><table id=\"%s\">\n", esc(t.ID))
	} else {
		h.str("<div class=\"table-wrap\"><table>\n")
	}
	if withCaption {
		h.printf("<caption>%s%s</caption>\n", esc(t.Title), h.csvLink(t.ID))
	} else if link := h.csvLink(t.ID); link != "" {
		h.printf("<caption>%s</caption>\n", strings.TrimSpace(link))
	}
	grouped := false
	for _, c := range t.Columns {
		if c.Group != "" {
			grouped = true
		}
	}
	h.str("<thead>\n<tr>")
	numClass := func(c column) string {
		if c.Numeric {
			return ` class="num"`
		}
		return ""
	}
	if grouped {
		for i := 0; i < len(t.Columns); {
			c := t.Columns[i]
			if c.Group == "" {
				h.printf("<th rowspan=\"2\"%s>%s</th>", numClass(c), esc(c.Name))
				i++
				continue
			}
			j := i
			for j < len(t.Columns) && t.Columns[j].Group == c.Group {
				j++
			}
			h.printf("<th class=\"group\" colspan=\"%d\">%s</th>", j-i, esc(c.Group))
			i = j
		}
		h.str("</tr>\n<tr>")
		for _, c := range t.Columns {
			if c.Group != "" {
				h.printf("<th%s>%s</th>", numClass(c), esc(c.Name))
			}
		}
	} else {
		for _, c := range t.Columns {
			h.printf("<th%s>%s</th>", numClass(c), esc(c.Name))
		}
	}
	h.str("</tr>\n</thead>\n<tbody>\n")
	h.rows(t, t.Rows)
	h.str("</tbody>\n")
	if len(t.Foot) > 0 {
		h.str("<tfoot>\n")
		h.rows(t, t.Foot)
		h.str("</tfoot>\n")
	}
	h.str("</table></div>\n")
	if withCaption && t.Caption != "" {
		h.printf("<p class=\"caption\">%s</p>\n", esc(t.Caption))
	}
}

func (h *htmlWriter) rows(t *table, rows [][]cell) {
	for _, r := range rows {
		h.str("<tr>")
		for i, c := range r {
			var classes []string
			if i < len(t.Columns) && t.Columns[i].Numeric {
				classes = append(classes, "num")
			}
			if i < len(t.Columns) && t.Columns[i].Wrap {
				classes = append(classes, "wrap")
			}
			if c.Class != "" {
				classes = append(classes, c.Class)
			}
			if len(classes) > 0 {
				h.printf("<td class=\"%s\">%s</td>", esc(strings.Join(classes, " ")), esc(c.Text))
			} else {
				h.printf("<td>%s</td>", esc(c.Text))
			}
		}
		h.str("</tr>\n")
	}
}
