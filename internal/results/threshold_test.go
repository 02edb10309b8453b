package results

import (
	"strings"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		expr string
		want Threshold
	}{
		{"nopm>=40000", Threshold{Figure: FigureNOPM, Op: ">=", Limit: 40000, Unit: "new-orders/min"}},
		{" nopm >= 40000 ", Threshold{Figure: FigureNOPM, Op: ">=", Limit: 40000, Unit: "new-orders/min"}},
		{"new_order:p99<=50ms", Threshold{TxType: "new_order", Stat: "p99", Op: "<=", Limit: 50, Unit: "ms"}},
		{"new_order:p99.9<1.5s", Threshold{TxType: "new_order", Stat: "p99.9", Op: "<", Limit: 1500, Unit: "ms"}},
		{"p99<=200us", Threshold{Stat: "p99", Op: "<=", Limit: 0.2, Unit: "ms"}},
		{"iops[4k-randread]>=100000", Threshold{Figure: FigureIOPS, Step: "4k-randread", Op: ">=", Limit: 100000, Unit: "I/O per s"}},
		{"iops[4k-randread]>=1e5", Threshold{Figure: FigureIOPS, Step: "4k-randread", Op: ">=", Limit: 100000, Unit: "I/O per s"}},
		{"lat_p99_us[4k-randread]<=2ms", Threshold{Figure: FigureLatP99US, Step: "4k-randread", Op: "<=", Limit: 2000, Unit: "µs"}},
		{"lat_p99_us<=500", Threshold{Figure: FigureLatP99US, Op: "<=", Limit: 500, Unit: "µs"}},
		{"latency_p99[users-8]<=50", Threshold{Figure: FigureLatencyP99, Step: "users-8", Op: "<=", Limit: 50, Unit: "ms"}},
		{"errors_per_s<1errors/s", Threshold{Figure: FigureErrorsPerSec, Op: "<", Limit: 1, Unit: "errors/s"}},
		{"mb_s>200MB/s", Threshold{Figure: FigureMBPerSec, Op: ">", Limit: 200, Unit: "MB/s"}},
		{"tpm_vs_quiet>=80%", Threshold{Figure: FigureTPMVsQuiet, Op: ">=", Limit: 80, Unit: "%"}},
		{"max_users_under_ceiling>=16", Threshold{Figure: FigureMaxUsersUnderCeiling, Op: ">=", Limit: 16, Unit: "users"}},
		{"sda_latency_p99<=5ms", Threshold{Figure: "sda_latency_p99", Op: "<=", Limit: 5, Unit: "ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := ParseThreshold(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Expr = tt.expr
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseThresholdRefuses(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"nopmm>=40000", "did you mean nopm?"},
		{"iosp>=1", "did you mean iops?"},
		{"nopm=40000", "'=' alone is no comparison"},
		{"nopm 40000", "no comparison"},
		{">=40000", "no figure"},
		{"nopm>=", "no value"},
		{"nopm>=many", "not a number"},
		{"nopm>=NaN", "not a finite number"},
		{"nopm>=50ms", "is a duration, the figure is in new-orders/min"},
		{"new_order:p99<=50", ""}, // a bare number is the unit's: accepted
		{"new_order:p99<=50MB", "is a time in ms"},
		{"new_order:p98<=50ms", "no latency statistic"},
		{"new order:p99<=50ms", "may only hold letters"},
		{"iops[]>=1", "step in brackets is empty"},
		{"iops[4k>=1", "in brackets after the figure"},
		{"bw>=1", "not a figure dbio records"},
		{"iops>=1\x1b[2J", "holds"},
		{"mb_s>200GB/s", `not "GB/s"`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := ParseThreshold(tt.expr)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestThresholdHolds(t *testing.T) {
	for _, tt := range []struct {
		expr string
		v    float64
		want bool
	}{
		{"nopm>=100", 100, true}, {"nopm>100", 100, false}, {"nopm<=100", 100, true}, {"nopm<100", 100, false}, {"nopm>=100", 99, false},
	} {
		th, err := ParseThreshold(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Holds(tt.v); got != tt.want {
			t.Errorf("%s holds for %v: %v, want %v", tt.expr, tt.v, got, tt.want)
		}
	}
}
