package units

import (
	"strings"
	"testing"
)

// FuzzParseBytes reads sizes as users type them on the command line and in
// suite files: a size either fails or is a byte count that is not negative,
// that FormatBytes prints, and that a larger unit never makes smaller.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"4k", "64KiB", "256MB", "2G", "1.5T", "512", " 8 m ", "8388607.99T", "8388608T", "0.0001k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("%q read as %d bytes", s, n)
		}
		if !strings.HasSuffix(FormatBytes(uint64(n)), "B") {
			t.Errorf("%d bytes print as %q", n, FormatBytes(uint64(n)))
		}
		num := strings.TrimRight(strings.TrimSpace(s), "kKmMgGtTiIbB ")
		if big, err := ParseBytes(num + "T"); err == nil && big < n {
			t.Errorf("%q is %d bytes but %qT only %d", s, n, num, big)
		}
	})
}
