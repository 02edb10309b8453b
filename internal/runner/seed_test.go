package runner

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"dbio/internal/arrival"
	"dbio/internal/results"
	"dbio/internal/vusers"
)

// instantSession answers every transaction at once: the test reads only when
// the sessions were scheduled to start them.
type instantSession struct{}

func (instantSession) Next(context.Context) error { return nil }
func (instantSession) Close() error               { return nil }

// scheduledGaps runs users sessions on the arrivals a pacing gives them
// (through the runner's own arrivals and vusers, as a step does) until each
// has begun n transactions, and returns each session's intended starts as
// offsets from its first.
func scheduledGaps(t *testing.T, p Pacing, users, n int) [][]time.Duration {
	t.Helper()
	var mu sync.Mutex
	starts := make([][]time.Time, users)
	done := make(chan struct{})
	complete := 0
	a := p.arrivals(users, p.offered(users), nil)
	a.Begin = func(i int, tm arrival.Timing) {
		mu.Lock()
		defer mu.Unlock()
		if len(starts[i]) < n {
			starts[i] = append(starts[i], tm.Intended)
			if len(starts[i]) == n {
				if complete++; complete == users {
					close(done)
				}
			}
		}
	}
	g, err := vusers.Start(context.Background(), vusers.Users{N: users, Arrivals: a,
		Open: func(context.Context, int) (vusers.Session, error) { return instantSession{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	g.Stop()
	out := make([][]time.Duration, users)
	for i, s := range starts {
		for _, at := range s {
			out[i] = append(out[i], at.Sub(s[0]))
		}
	}
	return out
}

// An open-loop run's Poisson schedule is drawn from the seed run.json
// records: the pacing rebuilt from the record schedules every session's
// transactions exactly as the run did, and another seed schedules them
// differently.
func TestPoissonScheduleFollowsTheRecordedSeed(t *testing.T) {
	const users, n = 2, 40
	run := Pacing{Process: arrival.Poisson, Rate: 4000, Seed: 42}
	recorded, err := json.Marshal(run.Record())
	if err != nil {
		t.Fatal(err)
	}
	var rec results.PacingConfig
	if err := json.Unmarshal(recorded, &rec); err != nil {
		t.Fatal(err)
	}
	process, err := arrival.ParseProcess(rec.Arrival)
	if err != nil {
		t.Fatal(err)
	}
	again := Pacing{Process: process, Rate: rec.RateTPS, Seed: rec.Seed}
	if again != run {
		t.Fatalf("the record %s rebuilds %+v, want %+v", recorded, again, run)
	}

	first := scheduledGaps(t, run, users, n)
	second := scheduledGaps(t, again, users, n)
	other := run
	other.Seed = 43
	third := scheduledGaps(t, other, users, n)
	for u := range users {
		if !slices.Equal(first[u], second[u]) {
			t.Errorf("user %d: the recorded seed gave other starts:\n%v\n%v", u, first[u], second[u])
		}
		if slices.Equal(first[u], third[u]) {
			t.Errorf("user %d: seeds 42 and 43 gave the same starts %v", u, first[u])
		}
		// The starts are the arrival plan's own, as its seed draws them.
		s, err := arrival.Plan{Process: arrival.Poisson, Rate: run.Rate, Users: users, Seed: 42}.Schedule(u)
		if err != nil {
			t.Fatal(err)
		}
		at0 := s.Next()
		for k := 1; k < n; k++ {
			if want := s.Next() - at0; first[u][k] != want {
				t.Fatalf("user %d start %d at %v after the first, the seed's schedule says %v", u, k, first[u][k], want)
			}
		}
	}
}
