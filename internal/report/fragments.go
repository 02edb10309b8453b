package report

import (
	"fmt"
	"path/filepath"

	"dbio/internal/results"
	"dbio/internal/units"
)

// fragmentationTables show the extents of dbio's database files through the
// run, and the files that hold the most at the end: fragments a run creates
// are what preallocation and contiguous allocation prevent.
func fragmentationTables(run results.Run, prefix string) []block {
	recs := run.Fragmentation
	if len(recs) == 0 {
		return nil
	}
	first := recs[0]
	t := &table{ID: prefix + "fragmentation", Title: "File fragmentation (extents, from FIEMAP)"}
	t.Columns = []column{{Name: "when"}, {Name: "files", Numeric: true}, {Name: "size", Numeric: true}, {Name: "extents", Numeric: true}, {Name: "created since start", Numeric: true}}
	for _, r := range recs {
		t.Rows = append(t.Rows, []cell{
			textCell(r.At),
			numCell(float64(r.Files), thousands),
			{Text: units.FormatBytes(uint64(max(r.Bytes, 0))), Raw: fmt.Sprint(r.Bytes)},
			numCell(float64(r.Extents), thousands),
			numCell(float64(r.Extents-first.Extents), thousands),
		})
	}
	blocks := []block{t}
	last := recs[len(recs)-1]
	if len(last.Largest) > 0 {
		f := &table{ID: prefix + "fragmentation-files", Title: "Largest files at the end"}
		f.Columns = []column{{Name: "file"}, {Name: "size", Numeric: true}, {Name: "extents", Numeric: true}}
		for _, fe := range last.Largest {
			f.Rows = append(f.Rows, []cell{
				{Text: filepath.Base(fe.Path), Raw: fe.Path},
				{Text: units.FormatBytes(uint64(max(fe.Bytes, 0))), Raw: fmt.Sprint(fe.Bytes)},
				numCell(float64(fe.Extents), thousands),
			})
		}
		blocks = append(blocks, f)
	}
	blocks = append(blocks, &paragraph{Class: "note", Text: fmt.Sprintf("The run created %s fragments in its own files, its database's and backups' (from %s extents after the load to %s at the end).",
		thousands(float64(last.Extents-first.Extents)), thousands(float64(first.Extents)), thousands(float64(last.Extents)))})
	return blocks
}
