// Package units parses and formats the sizes and rates users type on the
// command line and in suite files ("2GB", "256MiB", "4k"), the same way everywhere.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseBytes reads a size such as "4k", "64KiB", "256MB" or "2G". Units are
// binary (1k = 1024), as in fio and the engines' own settings; a bare number is bytes.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size: use a number with an optional unit, e.g. 512MB or 4k")
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("malformed size %q: use a number with an optional unit, e.g. 512MB or 4k", s)
	}
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "ib"), "b")
	mult := map[string]float64{"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("malformed size %q: unknown unit %q (use k, M, G or T)", s, t[i:])
	}
	if unit == "" && strings.ContainsRune(num, '.') {
		return 0, fmt.Errorf("malformed size %q: a byte count must be whole", s)
	}
	b := v * mult
	if b >= math.MaxInt64 { // float64(math.MaxInt64) is 2^63, itself past the largest int64
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(b), nil
}

// FormatBytes renders a byte count with a binary unit, for messages and tables.
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// ExactBytes writes a byte count in the largest binary unit that keeps it
// exact, the way a server's configuration file takes sizes: suffixes name
// GiB, MiB and KiB in its syntax ("G", "M", "K" in my.cnf; "GB", "MB",
// "kB" in postgresql.conf). ok is false when b is not a whole number of
// KiB, which the caller writes as its file allows.
func ExactBytes(b int64, suffixes [3]string) (s string, ok bool) {
	for i, shift := range []uint{30, 20, 10} {
		if b%(1<<shift) == 0 {
			return strconv.FormatInt(b>>shift, 10) + suffixes[i], true
		}
	}
	return "", false
}

// Huge is the magnitude from which a figure is written in scientific
// notation: no measurement dbio makes comes near it, and a value beyond it
// (from a damaged or edited record) written out in full would run to
// hundreds of digits.
const Huge = 1e15

// FormatHuge writes a figure of Huge or more (or any other) with three
// significant digits in scientific notation: 1.7e+308.
func FormatHuge(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

// GroupThousands writes a count with a comma between each group of three
// digits: 145,118 and -1,234.
func GroupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	if len(digits) < len(s) {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// FormatMicros writes a latency in microseconds with the unit a reader
// takes in at a glance: 87 µs, 1.23 ms, 2.50 s, 1e+294 s; "-" when there is
// none (NaN) or it is not a number (infinite).
func FormatMicros(us float64) string {
	switch {
	case math.IsNaN(us) || math.IsInf(us, 0):
		return "-"
	case math.Abs(us) >= Huge:
		return FormatHuge(us/1e6) + " s"
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1000:
		return fmt.Sprintf("%.2f ms", us/1000)
	}
	return fmt.Sprintf("%.0f µs", us)
}
