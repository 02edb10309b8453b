package runner

import (
	"errors"
	"sort"

	"dbio/internal/engine"
	"dbio/internal/results"
	"dbio/internal/target"
)

// largestFiles is how many files a fragmentation record names.
const largestFiles = 12

// fragmentation counts the extents of every file dbio keeps on the
// placement's data and log targets (database files, WAL and redo logs;
// backups are counted by the backup scenario's targets when they share them).
// A filesystem without FIEMAP (tmpfs) gives no record.
func fragmentation(pl engine.Placement, at string) (results.Fragmentation, bool) {
	rec := results.Fragmentation{At: at}
	seen := map[string]bool{}
	var all []results.FileExtents
	for _, t := range []*target.Target{pl.Data, pl.Log, pl.Backup} {
		if t == nil || seen[t.Dir] {
			continue
		}
		seen[t.Dir] = true
		files, err := target.ExtentsUnder(t.Dir)
		if errors.Is(err, target.ErrNoExtentMap) {
			continue
		}
		all = append(all, files...)
	}
	if len(all) == 0 {
		return rec, false
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Bytes > all[j].Bytes })
	for _, f := range all {
		rec.Files++
		rec.Extents += f.Extents
		rec.Bytes += f.Bytes
	}
	rec.Largest = all[:min(len(all), largestFiles)]
	return rec, true
}

// recordFragmentation appends a record to run.json.
func recordFragmentation(dir *results.Dir, pl engine.Placement, at string) {
	if rec, ok := fragmentation(pl, at); ok {
		_ = dir.UpdateRun(func(r *results.Run) { r.Fragmentation = append(r.Fragmentation, rec) })
	}
}
