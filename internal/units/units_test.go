package units

import (
	"math"
	"testing"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"4096", 4096, false},
		{"4k", 4096, false},
		{"64KiB", 64 << 10, false},
		{"256MB", 256 << 20, false},
		{"2G", 2 << 30, false},
		{"1.5g", 3 << 29, false},
		{" 1T ", 1 << 40, false},
		{"", 0, true},
		{"abc", 0, true},
		{"12q", 0, true},
		{"1.5", 0, true},
		{"-5M", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	tests := map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 29: "1.5 GiB"}
	for in, want := range tests {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestExactBytes(t *testing.T) {
	suffixes := [3]string{"G", "M", "K"}
	for b, want := range map[int64]string{0: "0G", 2 << 30: "2G", 1536 << 20: "1536M", 1025 << 10: "1025K", 1000: ""} {
		if got, ok := ExactBytes(b, suffixes); got != want || ok != (want != "") {
			t.Errorf("ExactBytes(%d) = %q, %v; want %q", b, got, ok, want)
		}
	}
}

func TestGroupThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 145118: "145,118", 1234567: "1,234,567", -1234: "-1,234", -999: "-999"} {
		if got := GroupThousands(n); got != want {
			t.Errorf("GroupThousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFormatMicros(t *testing.T) {
	for _, tc := range []struct {
		us   float64
		want string
	}{
		{87.4, "87 µs"},
		{999.4, "999 µs"},
		{1234, "1.23 ms"},
		{2.5e6, "2.50 s"},
		{math.NaN(), "-"},
		// A damaged record: a few characters, never hundreds of digits.
		{1e300, "1e+294 s"},
		{math.Inf(1), "-"},
	} {
		if got := FormatMicros(tc.us); got != tc.want {
			t.Errorf("FormatMicros(%v) = %q, want %q", tc.us, got, tc.want)
		}
	}
}
