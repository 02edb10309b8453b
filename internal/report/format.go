package report

import (
	"math"
	"strconv"
	"strings"

	"dbio/internal/units"
)

// Number formats shared by the HTML, Markdown and CSV outputs. Everything is
// formatted with strconv, never with the locale, so output is byte-for-byte
// reproducible.

// thousands renders a count with thousands separators: 145,118.
func thousands(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return units.GroupThousands(int64(math.Round(v)))
}

// fixed renders v with n decimals.
func fixed(v float64, n int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := strconv.FormatFloat(v, 'f', n, 64)
	if s == "-0" || strings.Trim(s, "-0.") == "" && strings.HasPrefix(s, "-") {
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// quantity renders a measured figure at a precision a reader takes in:
// counts above 1000 with separators, smaller values with two or three
// significant digits.
func quantity(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case a >= 1000:
		return thousands(v)
	case a >= 100:
		return fixed(v, 0)
	case a >= 10:
		return fixed(v, 1)
	case a >= 1:
		return fixed(v, 2)
	case a == 0:
		return "0"
	}
	return fixed(v, 3)
}

// millis renders a latency in milliseconds with a precision that keeps
// three significant digits for sub-millisecond storage and whole numbers for
// slow paths.
func millis(ms float64) string {
	a := math.Abs(ms)
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return "-"
	case a >= 100:
		return thousands(ms)
	case a >= 10:
		return fixed(ms, 1)
	case a >= 1:
		return fixed(ms, 2)
	}
	return fixed(ms, 3)
}

// percent renders a share in % with one decimal below 10 and none above.
func percent(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case math.Abs(v) < 10:
		return fixed(v, 1)
	}
	return fixed(v, 0)
}

// signedPercent renders a change in %: "+55 %", "−56 %".
func signedPercent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := percent(math.Abs(v))
	switch {
	case s == "0" || s == "0.0":
		return s + " %"
	case v > 0:
		return "+" + s + " %"
	}
	return "−" + s + " %"
}

// signed makes a format show the sign of a difference: "+83,018", "−0.760".
func signed(format func(float64) string) func(float64) string {
	return func(v float64) string {
		s := format(math.Abs(v))
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return "-"
		case strings.Trim(s, "0.,") == "":
			return s
		case v > 0:
			return "+" + s
		case v < 0:
			return "−" + s
		}
		return s
	}
}

// ratio renders B/A as "2.0x", "0.45x", "12x".
func ratio(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case a >= 10:
		return fixed(v, 0) + "x"
	case a >= 1:
		return fixed(v, 1) + "x"
	case a >= 0.1 || a == 0:
		return fixed(v, 2) + "x"
	}
	return strconv.FormatFloat(v, 'g', 2, 64) + "x"
}

// raw renders a value for CSV: full precision, no separators, empty for
// missing values.
func raw(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 10, 64)
}

// blockSize names a block size as fio does: 4k, 128k, 1m.
func blockSize(bs int64) string {
	switch {
	case bs <= 0:
		return "-"
	case bs%(1<<20) == 0:
		return strconv.FormatInt(bs>>20, 10) + "m"
	case bs%1024 == 0:
		return strconv.FormatInt(bs>>10, 10) + "k"
	}
	return strconv.FormatInt(bs, 10) + "b"
}

// plural writes "1 user", "4 users".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// sentenceCase upper-cases the first letter, but leaves names such as
// "p99" alone.
func sentenceCase(s string) string {
	if s == "" || len(s) > 1 && s[1] >= '0' && s[1] <= '9' {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
