package as3ap

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"dbio/internal/workload/sqlclient"
)

// loaderFingerprints are the digests of what each loader version generates
// from seed 3 at 2,000 rows (every relation's name and columns and every
// row, in the order the loader inserts them).
var loaderFingerprints = map[int]string{
	1: "08fa5eef0bb3880d09468cceb08709ce04973302177517ff454035ff027d4e5f",
}

// TestLoaderFingerprint fails when the loader generates other relations
// than its version recorded: raise loaderVersion then, so that --reuse
// refuses relations the old loader made, and record the new version's
// digest.
func TestLoaderFingerprint(t *testing.T) {
	h := sha256.New()
	gen := newGenerator(2000, 3)
	for rel := range relations {
		table := relationTable(&sqlclient.Dialect{}, gen, rel)
		fmt.Fprintln(h, table.Name, table.Columns)
		var args []any
		for i := 1; i <= table.Rows; i++ {
			args = table.Row(args[:0], i)
			fmt.Fprintln(h, args...)
		}
	}
	got := hex.EncodeToString(h.Sum(nil))
	want, ok := loaderFingerprints[loaderVersion]
	switch {
	case !ok:
		t.Fatalf("loader version %d has no recorded digest: record %s in loaderFingerprints", loaderVersion, got)
	case got != want:
		t.Fatalf("the loader generates other relations than its version %d did (digest %s, recorded %s): raise loaderVersion and record the new version's digest", loaderVersion, got, want)
	}
}
