package tpcc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"testing"
	"time"
)

// loaderFingerprints are the digests of what each loader version generates
// from seed 1 at one warehouse (every row of every table, in the order the
// loader emits them), at one fixed load time.
var loaderFingerprints = map[int]string{
	1: "62cd346ab547ecd0cda48328b65ebc953098ff22dee0a4dac942ad5c88f3bf8c",
}

// TestLoaderFingerprint fails when the loader generates other data than
// its version recorded: raise loaderVersion then, so that --reuse refuses
// a database the old loader made, and record the new version's digest.
func TestLoaderFingerprint(t *testing.T) {
	h := sha256.New()
	gen := &generator{c: loadTimeConstants(1), now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), sink: digestSink{h, new([]byte)}}
	for wid := 0; wid <= 1; wid++ {
		if err := gen.generate(context.Background(), 1, wid); err != nil {
			t.Fatal(err)
		}
	}
	got := hex.EncodeToString(h.Sum(nil))
	want, ok := loaderFingerprints[loaderVersion]
	switch {
	case !ok:
		t.Fatalf("loader version %d has no recorded digest: record %s in loaderFingerprints", loaderVersion, got)
	case got != want:
		t.Fatalf("the loader generates other data than its version %d did (digest %s, recorded %s): raise loaderVersion and record the new version's digest", loaderVersion, got, want)
	}
}

// digestSink hashes the rows it is given.
type digestSink struct {
	h   hash.Hash
	buf *[]byte
}

func (s digestSink) add(_ context.Context, table string, row []value) error {
	b := append((*s.buf)[:0], table...)
	for _, v := range row {
		b = append(b, 0x1f, byte('0'+v.kind))
		b = strconv.AppendInt(b, v.n, 10)
		b = append(b, ':')
		b = append(b, v.s...)
	}
	*s.buf = append(b, '\n')
	_, err := s.h.Write(*s.buf)
	return err
}

func (digestSink) flush(context.Context) error { return nil }
func (digestSink) close() error                { return nil }
