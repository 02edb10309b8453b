package goal

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseObjective(t *testing.T) {
	tests := []struct {
		in   string
		want Objective
		out  string
	}{
		{"p99<=50ms", Objective{Percentile: 99, Limit: 50 * time.Millisecond}, "p99<=50ms"},
		{"new_order:p99<=50ms", Objective{Tx: "new_order", Percentile: 99, Limit: 50 * time.Millisecond}, "new_order:p99<=50ms"},
		{"mean<=10ms", Objective{Mean: true, Limit: 10 * time.Millisecond}, "mean<=10ms"},
		{"p99.9<=200ms", Objective{Percentile: 99.9, Limit: 200 * time.Millisecond}, "p99.9<=200ms"},
		{"all:p50<=1.5s", Objective{Percentile: 50, Limit: 1500 * time.Millisecond}, "p50<=1.5s"},
		{" payment : P95 <= 750 us ", Objective{Tx: "payment", Percentile: 95, Limit: 750 * time.Microsecond}, "payment:p95<=750µs"},
		{"stock-level:mean<=2s", Objective{Tx: "stock-level", Mean: true, Limit: 2 * time.Second}, "stock-level:mean<=2s"},
		{"p100<=1s", Objective{Percentile: 100, Limit: time.Second}, "p100<=1s"},
	}
	for _, tt := range tests {
		got, err := ParseObjective(tt.in)
		if err != nil {
			t.Errorf("ParseObjective(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseObjective(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if got.String() != tt.out {
			t.Errorf("String() = %q, want %q", got.String(), tt.out)
		}
		if again, err := ParseObjective(got.String()); err != nil || again != got {
			t.Errorf("round trip of %q: %+v %v", tt.in, again, err)
		}
	}
}

func TestParseObjectiveRejects(t *testing.T) {
	tests := []struct{ in, says string }{
		{"", "it is empty"},
		{"p99", "there is no <="},
		{"p99<50ms", "the only comparison is <="},
		{"p99>=50ms", "the only comparison is <="},
		{":p99<=50ms", "transaction type before ':' is empty"},
		{"new order:p99<=50ms", `transaction type "new order" may only hold`},
		{"p0<=50ms", "above 0 and at most 100"},
		{"p101<=50ms", "above 0 and at most 100"},
		{"pXX<=50ms", "above 0 and at most 100"},
		{"median<=50ms", `statistic "median" is neither`},
		{"p99<=50", `limit "50" is not a duration`},
		{"p99<=fast", `limit "fast" is not a duration`},
		{"p99<=0s", "must be above zero"},
		{"p99<=-5ms", "must be above zero"},
	}
	for _, tt := range tests {
		_, err := ParseObjective(tt.in)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), "[TYPE:]STAT<=DURATION") {
			t.Errorf("ParseObjective(%q) error %v, want ErrSyntax saying %q and the form", tt.in, err, tt.says)
		}
	}
}

func TestEvaluate(t *testing.T) {
	step := Table{
		AllTypes:    {Count: 1000, Mean: 8 * time.Millisecond, Percentiles: map[float64]time.Duration{99: 40 * time.Millisecond, 99.9: 90 * time.Millisecond}},
		"new_order": {Count: 450, Mean: 12 * time.Millisecond, Percentiles: map[float64]time.Duration{99: 50 * time.Millisecond}},
		"delivery":  {Count: 0},
	}
	tests := []struct {
		objective string
		measured  time.Duration
		met       bool
		err       error
	}{
		{"p99<=50ms", 40 * time.Millisecond, true, nil},
		{"new_order:p99<=50ms", 50 * time.Millisecond, true, nil}, // at the limit meets it
		{"new_order:p99<=49ms", 50 * time.Millisecond, false, nil},
		{"mean<=5ms", 8 * time.Millisecond, false, nil},
		{"new_order:mean<=15ms", 12 * time.Millisecond, true, nil},
		{"p99.9<=100ms", 90 * time.Millisecond, true, nil},
		{"p97<=100ms", 0, false, ErrNotRecorded},
		{"delivery:p99<=1s", 0, false, ErrNoSamples},
		{"payment:mean<=1s", 0, false, ErrNoSamples},
	}
	for _, tt := range tests {
		o, err := ParseObjective(tt.objective)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := o.Evaluate(step)
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: error %v, want %v", tt.objective, err, tt.err)
			continue
		}
		if ev.Measured != tt.measured || ev.Met != tt.met {
			t.Errorf("%s: %+v, want measured %v met %v", tt.objective, ev, tt.measured, tt.met)
		}
	}
}

func TestObjectiveFor(t *testing.T) {
	types := []string{"new_order", "payment"}
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{{"p99<=50ms", "p99<=50ms", false}, {"New-Order:p99<=50ms", "new_order:p99<=50ms", false},
		{"payment:mean<=5ms", "payment:mean<=5ms", false}, {"delivery:p99<=1s", "", true}} {
		o, err := ParseObjective(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := o.For(types)
		switch {
		case tc.bad && (err == nil || !strings.Contains(err.Error(), "new_order, payment")):
			t.Errorf("%s: %v, want an error naming the types", tc.in, err)
		case !tc.bad && (err != nil || got.String() != tc.want):
			t.Errorf("%s: %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}
