package postgres

import (
	"strings"

	"dbio/internal/engine"
	"dbio/internal/units"
)

var _ engine.SpaceNeeds = (*Engine)(nil)

// What a PostgreSQL cluster takes beside the workload's tables, as
// measured on PostgreSQL 15 with dbio's settings: initdb's catalogs and
// template databases, about 25 MB; and WAL, which is kept between
// checkpoints and, once written, recycled rather than removed up to
// min_wal_size (1 GB as dbio sets it). A load writes about as much WAL as
// data (401 MB of WAL beside 430 MB of four TPC-C warehouses), so the WAL
// counted is the smaller of min_wal_size and the data.
const (
	clusterFiles     = 25 << 20
	clusterFilesWhat = "the cluster's catalogs and template databases"
)

// SpaceNeed implements engine.SpaceNeeds: the cluster's own files beside
// the data, and the WAL, on the log target when there is one.
func (e *Engine) SpaceNeed(o engine.Options, data uint64) []engine.EngineFiles {
	minWAL, what := managedBytes("min_wal_size"), "min_wal_size, as dbio sets it"
	for k, v := range o.Settings {
		if !strings.EqualFold(k, "min_wal_size") {
			continue
		}
		// A bare number is in megabytes, as PostgreSQL reads this setting.
		if n, err := parseSize(v, 1<<20); err == nil && n > 0 {
			minWAL, what = uint64(n), "the min_wal_size setting"
		}
	}
	wal := engine.EngineFiles{Bytes: min(minWAL, data), OnLog: true,
		What: "WAL kept between checkpoints (about as much as the data, at most " + what + ")"}
	return []engine.EngineFiles{{Bytes: clusterFiles, What: clusterFilesWhat}, wal}
}

// managedBytes is the size dbio's configuration of a managed server gives
// setting name (0 when it sets none), so that the space counted is the
// space the server it starts will take.
func managedBytes(name string) uint64 {
	for _, st := range benchmarkSettings(0, "", 0, 0) {
		if st.Name == name {
			if n, err := units.ParseBytes(st.Value); err == nil && n > 0 {
				return uint64(n)
			}
		}
	}
	return 0
}
