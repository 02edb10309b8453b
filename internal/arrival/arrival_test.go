package arrival

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"
)

func first(t *testing.T, p Plan, user, n int) []time.Duration {
	t.Helper()
	s, err := p.Schedule(user)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = s.Next()
	}
	return out
}

func TestFixedScheduleExact(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		plan Plan
		user int
		want []time.Duration
	}{
		// 100 tx/s over 4 users: each user every 40 ms, phased by 10 ms.
		{"total split, user 0", Plan{Rate: 100, Users: 4}, 0, []time.Duration{0, 40 * ms, 80 * ms}},
		{"total split, user 1", Plan{Rate: 100, Users: 4}, 1, []time.Duration{10 * ms, 50 * ms, 90 * ms}},
		{"total split, user 3", Plan{Rate: 100, Users: 4}, 3, []time.Duration{30 * ms, 70 * ms, 110 * ms}},
		{"per user", Plan{Rate: 25, PerUser: true, Users: 4}, 1, []time.Duration{10 * ms, 50 * ms, 90 * ms}},
		// 3 tx/s: thirds of a second, rounded to the nanosecond.
		{"uneven period", Plan{Rate: 3, Users: 1}, 0, []time.Duration{0, 333333333, 666666667, time.Second, 1333333333}},
	}
	for _, tt := range tests {
		if got := first(t, tt.plan, tt.user, len(tt.want)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}

	// All users together: exactly one start every 10 ms.
	var all []time.Duration
	for u := range 4 {
		all = append(all, first(t, Plan{Rate: 100, Users: 4}, u, 25)...)
	}
	slices.Sort(all)
	for i, d := range all {
		if d != time.Duration(i)*10*ms {
			t.Fatalf("merged start %d at %v, want %v", i, d, time.Duration(i)*10*ms)
		}
	}
}

// TestFixedScheduleDoesNotDrift runs seven million starts at 7 tx/s: the
// last is exactly at one million seconds. Adding the rounded period
// (142857143 ns) that many times would be a millisecond late.
func TestFixedScheduleDoesNotDrift(t *testing.T) {
	s, err := Plan{Rate: 7, Users: 1}.Schedule(0)
	if err != nil {
		t.Fatal(err)
	}
	var d time.Duration
	for n := int64(0); n <= 7_000_000; n++ {
		d = s.Next()
		if n%99_991 == 0 { // spot checks against exact rational rounding
			exact := new(big.Rat).SetFrac(big.NewInt(n*1_000_000_000), big.NewInt(7))
			f, _ := exact.Float64()
			if want := time.Duration(math.Round(f)); d != want {
				t.Fatalf("start %d at %v, exact %v", n, d, want)
			}
		}
	}
	if d != 1_000_000*time.Second {
		t.Errorf("start 7,000,000 at %v, want 1,000,000 s", d)
	}
	if drifted := 7_000_000 * time.Duration(142857143); drifted-d != time.Millisecond {
		t.Errorf("summing periods would drift by %v", drifted-d)
	}
}

func TestPoissonDeterministic(t *testing.T) {
	plan := Plan{Process: Poisson, Rate: 500, Users: 3, Seed: 42}
	a := first(t, plan, 1, 1000)
	first(t, plan, 2, 10) // scheduling other users first changes nothing
	if b := first(t, plan, 1, 1000); !slices.Equal(a, b) {
		t.Error("the same seed and user gave different starts")
	}
	if c := first(t, plan, 0, 1000); slices.Equal(a, c) {
		t.Error("two users share one stream")
	}
	other := plan
	other.Seed = 43
	if d := first(t, other, 1, 1000); slices.Equal(a, d) {
		t.Error("another seed gave the same starts")
	}
	if !slices.IsSorted(a) || a[0] <= 0 {
		t.Errorf("starts must increase from after zero: %v", a[:5])
	}
}

// TestPoissonRate checks a long schedule against the exponential
// distribution. For n gaps of rate λ the time of the n-th start is
// Gamma(n, λ): λ·T/n has mean 1 and standard deviation 1/√n, and the share
// of gaps longer than k mean gaps is e^-k with binomial deviation
// √(p(1-p)/n). Every bound is four standard deviations, which a correct
// generator misses with probability below 1e-4 per seed; the seed is fixed,
// so the test is deterministic.
func TestPoissonRate(t *testing.T) {
	const n, rate = 200_000, 1000.0
	s, err := Plan{Process: Poisson, Rate: rate, Users: 1, Seed: 7}.Schedule(0)
	if err != nil {
		t.Fatal(err)
	}
	meanGap := time.Second / time.Duration(rate)
	var prev, last time.Duration
	var over1, over2 int
	for range n {
		last = s.Next()
		gap := last - prev
		prev = last
		if gap > meanGap {
			over1++
		}
		if gap > 2*meanGap {
			over2++
		}
	}
	if got, bound := rate*last.Seconds()/n, 4/math.Sqrt(n); math.Abs(got-1) > bound {
		t.Errorf("mean rate ratio %v, want 1 ± %v", got, bound)
	}
	for k, count := range map[float64]int{1: over1, 2: over2} {
		p := math.Exp(-k)
		if got, bound := float64(count)/n, 4*math.Sqrt(p*(1-p)/n); math.Abs(got-p) > bound {
			t.Errorf("share of gaps over %v mean gaps %v, want %v ± %v", k, got, p, bound)
		}
	}
}

// TestPoissonSplitAcrossUsers counts every user's starts in the first 100 s
// of 1000 tx/s split over 8 users: the merged process is Poisson with mean
// 100,000 and standard deviation √100,000 ≈ 316.
func TestPoissonSplitAcrossUsers(t *testing.T) {
	plan := Plan{Process: Poisson, Rate: 1000, Users: 8, Seed: 1}
	horizon := 100 * time.Second
	count := 0
	for u := range plan.Users {
		s, err := plan.Schedule(u)
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() < horizon {
			count++
		}
	}
	if mean := 1000 * horizon.Seconds(); math.Abs(float64(count)-mean) > 4*math.Sqrt(mean) {
		t.Errorf("%d starts in %v, want %v ± %v", count, horizon, mean, 4*math.Sqrt(mean))
	}
	if plan.UserRate() != 125 || plan.Total() != 1000 {
		t.Errorf("user rate %v total %v", plan.UserRate(), plan.Total())
	}
}

func TestTiming(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ms := time.Millisecond
	tests := []struct {
		name                    string
		timing                  Timing
		latency, service, delay time.Duration
		late                    bool
	}{
		{"on time", Timing{at(100), at(100), at(105)}, 5 * ms, 5 * ms, 0, false},
		{"within tolerance", Timing{at(100), at(101), at(106)}, 6 * ms, 5 * ms, 1 * ms, false},
		// Queued 1 s behind a stall: the database took 5 ms, the client waited 1005.
		{"behind a stall", Timing{at(100), at(1100), at(1105)}, 1005 * ms, 5 * ms, 1000 * ms, true},
		{"early", Timing{at(100), at(98), at(103)}, 5 * ms, 5 * ms, 0, false},
	}
	for _, tt := range tests {
		tm := tt.timing
		if tm.Latency() != tt.latency || tm.Service() != tt.service || tm.Delay() != tt.delay || tm.Late(2*ms) != tt.late {
			t.Errorf("%s: latency %v service %v delay %v late %v, want %v %v %v %v", tt.name,
				tm.Latency(), tm.Service(), tm.Delay(), tm.Late(2*ms), tt.latency, tt.service, tt.delay, tt.late)
		}
	}

	l := Lateness{Tolerance: 2 * ms}
	for _, tt := range tests {
		l.Record(tt.timing)
	}
	other := Lateness{Tolerance: 2 * ms, Started: 4, Late: 1, MaxDelay: 3 * ms}
	l.Add(other)
	if l.Started != 8 || l.Late != 2 || l.MaxDelay != time.Second || l.LateShare() != 0.25 {
		t.Errorf("lateness %+v share %v", l, l.LateShare())
	}
	if (Lateness{}).LateShare() != 0 {
		t.Error("no transactions should mean no late share")
	}
}

func TestPlanRejects(t *testing.T) {
	tests := []struct {
		plan Plan
		user int
		says string
	}{
		{Plan{Rate: 10}, 0, "at least one user"},
		{Plan{Rate: 0, Users: 1}, 0, "above zero"},
		{Plan{Rate: math.NaN(), Users: 1}, 0, "above zero"},
		{Plan{Rate: math.Inf(1), Users: 1}, 0, "above zero"},
		{Plan{Process: 7, Rate: 1, Users: 1}, 0, "unknown arrival process"},
		{Plan{Rate: 1, Users: 2}, 2, "outside 0..1"},
		{Plan{Rate: 1, Users: 2}, -1, "outside 0..1"},
	}
	for _, tt := range tests {
		if _, err := tt.plan.Schedule(tt.user); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%+v user %d: error %v, want one saying %q", tt.plan, tt.user, err, tt.says)
		}
	}
}

func ExamplePlan_Schedule() {
	plan := Plan{Process: Fixed, Rate: 200, Users: 2}
	for u := range plan.Users {
		s, _ := plan.Schedule(u)
		fmt.Println("user", u, s.Next(), s.Next(), s.Next())
	}
	// Output:
	// user 0 0s 10ms 20ms
	// user 1 5ms 15ms 25ms
}

func BenchmarkNext(b *testing.B) {
	for _, p := range []Process{Fixed, Poisson} {
		b.Run(p.String(), func(b *testing.B) {
			s, err := Plan{Process: p, Rate: 5000, Users: 16, Seed: 1}.Schedule(3)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				s.Next()
			}
		})
	}
}

func BenchmarkRecord(b *testing.B) {
	t0 := time.Now()
	tm := Timing{Intended: t0, Started: t0.Add(time.Millisecond), Ended: t0.Add(3 * time.Millisecond)}
	l := Lateness{Tolerance: time.Millisecond}
	for b.Loop() {
		l.Record(tm)
		_ = tm.Latency()
		_ = tm.Service()
	}
}

func TestParseProcess(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Process
		bad  bool
	}{{"fixed", Fixed, false}, {" Poisson ", Poisson, false}, {"uniform", 0, true}, {"", 0, true}} {
		got, err := ParseProcess(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseProcess(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
		if err == nil && got.String() != strings.ToLower(strings.TrimSpace(tc.in)) {
			t.Errorf("%v names itself %q", got, got.String())
		}
	}
}
