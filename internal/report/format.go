package report

import (
	"math"
	"strconv"
	"strings"

	"dbio/internal/analysis"
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
	if math.Abs(v) >= units.Huge {
		return units.FormatHuge(v)
	}
	return units.GroupThousands(int64(math.Round(v)))
}

// fixed renders v with n decimals.
func fixed(v float64, n int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	if math.Abs(v) >= units.Huge {
		return units.FormatHuge(v)
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

// throughputFormat is how a column of throughputs is written, one way
// for all its rows: with separators, and the decimals its largest value
// needs (none from 100, one from 10, two below), so that a column never
// mixes "1,469" and "506.45".
func throughputFormat(values []float64) func(float64) string {
	largest := 0.0
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			largest = math.Max(largest, math.Abs(v))
		}
	}
	decimals := 2
	switch {
	case largest >= 100:
		decimals = 0
	case largest >= 10:
		decimals = 1
	}
	return func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) >= units.Huge {
			return thousands(v)
		}
		if decimals == 0 {
			return thousands(v)
		}
		s := fixed(v, decimals)
		whole, frac, _ := strings.Cut(s, ".")
		n, err := strconv.ParseInt(whole, 10, 64)
		if err != nil {
			return s
		}
		grouped := units.GroupThousands(n)
		if n == 0 && strings.HasPrefix(whole, "-") {
			grouped = "-0"
		}
		return grouped + "." + frac
	}
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

// percent renders a share in % with one decimal below 10 and none above,
// with separators from 1,000.
func percent(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case math.Abs(v) < 10:
		return fixed(v, 1)
	case math.Abs(v) >= 1000:
		return thousands(v)
	}
	return fixed(v, 0)
}

// maxRatio bounds the ratios, and so the changes in %, written as numbers:
// B ten thousand times A says that A is as good as zero next to B, and the
// digits beyond say more about how small A was than about the runs.
const maxRatio = 10000

// maxChangePct is the change in % of B at maxRatio times A.
const maxChangePct = (maxRatio - 1) * 100

// percentChange writes the change from a to b in % of a, the one rule
// every comparison (compare, ab, repeat sets; HTML, Markdown, terminal)
// prints its changes by: "+55 %", "−56 %", "+1,250 %". A change with no
// meaning is written in a bounded form with its reason: "n/a (A is 0)",
// "> +999,900 % (A tiny next to B)", "n/a (not a finite number)"; "-" where a
// value is missing.
func percentChange(a, b float64) string {
	pct := analysis.Change(a, b)
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return "-"
	case math.IsInf(a, 0) || math.IsInf(b, 0):
		return "n/a (not a finite number)"
	case a == 0 && b == 0:
		return signedPercent(0)
	case a == 0:
		return "n/a (A is 0)"
	case pct > maxChangePct || pct < -maxChangePct:
		return signedPercent(pct) + " (A tiny next to B)"
	}
	return signedPercent(pct)
}

// signedPercent renders a change in %: "+55 %", "−56 %"; beyond
// ±maxChangePct "> +999,900 %" and "< −999,900 %".
func signedPercent(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v > maxChangePct:
		return "> +" + thousands(maxChangePct) + " %"
	case v < -maxChangePct:
		return "< −" + thousands(maxChangePct) + " %"
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

// ratio renders B/A as "2.0x", "0.45x", "12x"; beyond maxRatio either way
// "> 10,000x" and "< 0.0001x"; "-" against a zero A (an infinite ratio).
func ratio(v float64) string {
	a := math.Abs(v)
	sign := ""
	if v < 0 {
		sign = "−"
	}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case a > maxRatio:
		return map[bool]string{true: "> ", false: "< "}[v > 0] + sign + thousands(maxRatio) + "x"
	case a != 0 && a < 1.0/maxRatio:
		return map[bool]string{true: "< ", false: "> "}[v > 0] + sign + strconv.FormatFloat(1.0/maxRatio, 'f', -1, 64) + "x"
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
