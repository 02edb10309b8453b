package sysbench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"dbio/internal/workload/sqlclient"
)

// loaderFingerprints are the digests of what each loader version generates
// from seed 7 as two tables of 1,000 rows, once for each distribution of k
// (every table's name and columns and every row, in the order the loader
// inserts them).
var loaderFingerprints = map[int]string{
	1: "19292e10bf928a9f4a27f400d641c6362791a01d98c6f6bbad9347e3a4ae0b36",
}

// TestLoaderFingerprint fails when the loader generates other tables than
// its version recorded: raise loaderVersion then, so that --reuse refuses
// tables the old loader made, and record the new version's digest.
func TestLoaderFingerprint(t *testing.T) {
	h := sha256.New()
	for _, dist := range distributionNames() {
		cfg := DefaultConfig()
		cfg.Tables, cfg.TableSize, cfg.Seed, cfg.RandType = 2, 1000, 7, dist
		w := New(cfg)
		for n := 1; n <= cfg.Tables; n++ {
			table := w.table(&sqlclient.Dialect{}, n)
			fmt.Fprintln(h, dist, table.Name, table.Columns)
			var args []any
			for i := 1; i <= table.Rows; i++ {
				args = table.Row(args[:0], i)
				fmt.Fprintln(h, args...)
			}
		}
	}
	got := hex.EncodeToString(h.Sum(nil))
	want, ok := loaderFingerprints[loaderVersion]
	switch {
	case !ok:
		t.Fatalf("loader version %d has no recorded digest: record %s in loaderFingerprints", loaderVersion, got)
	case got != want:
		t.Fatalf("the loader generates other tables than its version %d did (digest %s, recorded %s): raise loaderVersion and record the new version's digest", loaderVersion, got, want)
	}
}
