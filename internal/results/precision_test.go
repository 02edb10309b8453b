package results

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A measurement until precise is recorded in the config after the ramp-up
// until steady, and reads back as the same fields; a step's record of how
// it ended reads back too.
func TestPrecisionRecords(t *testing.T) {
	c := RunConfig{Engine: "sqlite", Users: []int{4}, RampUpS: 60, StepS: 300, Workload: "tpcc",
		Steady:    &SteadyConfig{Until: "nopm_slope:0.5%", WindowS: 20},
		Precision: &PrecisionConfig{Bound: "nopm:2%,new_order:p99:10%", MinS: 30}}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"engine":"sqlite","users":[4],"rampup_s":60,"step_s":300,"ramp_until":"nopm_slope:0.5%","steady_window_s":20,` +
		`"precision":"nopm:2%,new_order:p99:10%","precision_min_s":30,"tpcc":null,"engine_options":{"external":false,"database":"","transport":""}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var back RunConfig
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("read back as\n%+v\nwant\n%+v", back, c)
	}

	lo, hi, pct, half := 980.0, 1020.0, 2.0, 3.25
	s := Step{Index: 1, Name: "users-4", Kind: "tpcc", Status: StatusCompleted, Precision: &StepPrecision{
		Asked: "nopm:2%", Steady: "nopm's drift across the measurement known within ±10 % at 95 % confidence, and not significant or within it", Confidence: 0.95, MinS: 30, CeilingS: 300,
		Ended: PrecisionReached, AtS: 95, SteadyAtEnd: true,
		Drift:   &PrecisionDrift{Series: "nopm", Pct: -1.5, HalfPct: &half, BatchS: 2, Batches: 47},
		Figures: []PrecisionFigure{{Name: "nopm", AskedPct: 2, Seconds: 95, Mean: 1000, Lo: &lo, Hi: &hi, ReachedPct: &pct, BatchS: 5, Batches: 19}}}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var sb Step
	if err := json.Unmarshal(b, &sb); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sb.Precision, s.Precision) {
		t.Errorf("step's precision read back as %+v, want %+v", sb.Precision, s.Precision)
	}
}
