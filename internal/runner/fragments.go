package runner

import (
	"errors"
	"path/filepath"
	"sort"

	"dbio/internal/engine"
	"dbio/internal/results"
	"dbio/internal/target"
)

// largestFiles is how many files a fragmentation record names.
const largestFiles = 12

// fragmentation counts the extents of the files that are this run's: the
// instance's own (its database files, WAL and redo log, engine.OwnFiles)
// and the backups it wrote, not those of other instances dbio keeps on the
// same target (a PostgreSQL kept beside a SQLite run's database). An
// instance that does not say its files, or a filesystem without FIEMAP
// (tmpfs), gives no record.
func fragmentation(pl engine.Placement, inst engine.Instance, at string) (results.Fragmentation, bool) {
	rec := results.Fragmentation{At: at}
	var places []string
	if own, ok := inst.(engine.OwnFiles); ok {
		places = own.OwnFiles()
	}
	if pl.Backup != nil && len(places) > 0 {
		// runBackups' directory on the backup target.
		places = append(places, filepath.Join(pl.Backup.Dir, "backups-"+inst.Info().Engine))
	}
	var all []results.FileExtents
	seen := map[string]bool{}
	for _, p := range places {
		if seen[p] {
			continue
		}
		seen[p] = true
		files, err := target.ExtentsUnder(p)
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
func recordFragmentation(dir *results.Dir, pl engine.Placement, inst engine.Instance, at string) {
	if rec, ok := fragmentation(pl, inst, at); ok {
		_ = dir.UpdateRun(func(r *results.Run) { r.Fragmentation = append(r.Fragmentation, rec) })
	}
}
