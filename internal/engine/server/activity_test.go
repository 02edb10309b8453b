package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// scriptedProbe finds the same sessions at every sample, or fails while
// failures are left, and tells each sample's outcome on samples.
type scriptedProbe struct {
	sessions []float64
	fail     *int
	samples  chan error
	closed   chan struct{}
}

func (p *scriptedProbe) Sample(ctx context.Context, sessions []float64) error {
	var err error
	if *p.fail > 0 {
		*p.fail--
		err = errors.New("the server went away")
	} else {
		copy(sessions, p.sessions)
	}
	select {
	case p.samples <- err:
	case <-ctx.Done():
	}
	return err
}

func (p *scriptedProbe) Close() { p.closed <- struct{}{} }

func newScripted(sessions []float64, failures int) (*Activity, *scriptedProbe, *[]string) {
	p := &scriptedProbe{sessions: sessions, fail: &failures, samples: make(chan error), closed: make(chan struct{}, 16)}
	var notices []string
	a := NewActivity([]string{"a_s", "b_s", "c_s"}, func(context.Context) (ActivityProbe, error) { return p, nil },
		func(msg string) { notices = append(notices, msg) })
	a.interval, a.retry = time.Millisecond, time.Millisecond
	return a, p, &notices
}

func TestActivityAddsSessionsTimesTheTimeBetweenSamples(t *testing.T) {
	a, p, _ := newScripted([]float64{2, 0, 1}, 0)
	m := map[string]float64{}
	a.Read(m) // starts the sampling
	if len(m) != 0 {
		t.Errorf("before any sample Read gave %v, want nothing", m)
	}
	for range 5 {
		if err := <-p.samples; err != nil {
			t.Fatal(err)
		}
	}
	a.Stop()
	a.Read(m)
	if m["a_s"] <= 0 || m["b_s"] != 0 || m["c_s"] <= 0 {
		t.Fatalf("after five samples: %v, want a_s and c_s positive, b_s zero", m)
	}
	// Both classes were counted over the same intervals: their seconds
	// stand exactly as their sessions.
	if ratio := m["a_s"] / m["c_s"]; ratio < 1.999999 || ratio > 2.000001 {
		t.Errorf("a_s / c_s = %v, want 2 (two sessions against one)", ratio)
	}
	select {
	case <-a.Done():
	default:
		t.Error("the sampling goroutine outlived Stop")
	}
	if len(p.closed) != 1 {
		t.Errorf("the probe was closed %d times, want once", len(p.closed))
	}
}

func TestActivityStopsAndIsNotRestarted(t *testing.T) {
	a, p, _ := newScripted([]float64{1, 0, 0}, 0)
	a.Stop() // before it started: nothing to wait for
	a.Read(map[string]float64{})
	select {
	case <-p.samples:
		t.Fatal("Read after Stop started the sampling")
	case <-a.Done():
		t.Fatal("Done closed for a sampler that never ran")
	default:
	}

	a, p, _ = newScripted([]float64{1, 0, 0}, 0)
	a.Read(map[string]float64{})
	<-p.samples
	a.Stop()
	<-a.Done()
	a.Stop() // twice is harmless
}

func TestActivityFailureGivesNoFiguresAndOneNotice(t *testing.T) {
	a, p, notices := newScripted([]float64{1, 1, 0}, 3)
	m := map[string]float64{}
	a.Read(m)
	for range 3 {
		if err := <-p.samples; err == nil {
			t.Fatal("a scripted failure succeeded")
		}
		// Read while failing: no figures rather than figures standing still.
		if a.Read(m); len(m) != 0 {
			t.Fatalf("Read while sampling fails gave %v", m)
		}
	}
	for range 3 {
		if err := <-p.samples; err != nil {
			t.Fatal(err)
		}
	}
	a.Stop()
	a.Read(m)
	if m["a_s"] <= 0 || m["a_s"] != m["b_s"] {
		t.Errorf("after reconnecting: %v, want a_s = b_s > 0", m)
	}
	if len(*notices) != 1 || !strings.Contains((*notices)[0], "the server went away") {
		t.Errorf("notices %q, want one naming the failure", *notices)
	}
	// Each failure closed the connection, and Stop the last one.
	if len(p.closed) != 4 {
		t.Errorf("the probe was closed %d times, want 4", len(p.closed))
	}
}

func TestActivityOff(t *testing.T) {
	for v, want := range map[string]bool{"off": true, "": false, "on": false} {
		if got := ActivityOff(func(string) string { return v }); got != want {
			t.Errorf("%s=%q: off = %v, want %v", ActivityEnv, v, got, want)
		}
	}
	if ActivityOff(nil) {
		t.Error("no environment turned it off")
	}
}

// A connection that cannot be made is retried; the probe a failed connect
// returns is not used, even a nil pointer of the engine's type.
func TestActivityRetriesAFailedConnect(t *testing.T) {
	p := &scriptedProbe{sessions: []float64{1, 0, 0}, fail: new(int), samples: make(chan error), closed: make(chan struct{}, 16)}
	refusals := 2
	connects := make(chan error, 8)
	var notices []string
	a := NewActivity([]string{"a_s", "b_s", "c_s"}, func(context.Context) (ActivityProbe, error) {
		if refusals > 0 {
			refusals--
			var none *scriptedProbe
			err := errors.New("connection refused")
			connects <- err
			return none, err
		}
		connects <- nil
		return p, nil
	}, func(msg string) { notices = append(notices, msg) })
	a.interval, a.retry = time.Millisecond, time.Millisecond
	a.Read(map[string]float64{})
	for range 2 {
		if err := <-connects; err == nil {
			t.Fatal("a scripted refusal connected")
		}
	}
	if err := <-connects; err != nil {
		t.Fatal(err)
	}
	<-p.samples
	a.Stop()
	if len(notices) != 1 || !strings.Contains(notices[0], "connection refused") {
		t.Errorf("notices %q, want one naming the refusal", notices)
	}
}
