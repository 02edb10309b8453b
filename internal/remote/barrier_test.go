package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestBarrierWaitsForTheInstant plays the coordinator over pipes: the
// tenant says ready, gets the instant, waits until it and says when it
// started; closing its input then ends its context with ErrInputClosed.
func TestBarrierWaitsForTheInstant(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	var slept time.Duration
	b := &Barrier{In: inR, Out: outW, Now: func() time.Time { return now.Add(slept) },
		Sleep: func(_ context.Context, d time.Duration) error { slept = d; return nil }}
	ctx, cancel := b.Watch(t.Context())
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- b.Wait(ctx) }()

	lines := bufio.NewScanner(outR)
	if !lines.Scan() || lines.Text() != readyLine {
		t.Fatalf("first line %q, want %q", lines.Text(), readyLine)
	}
	at := now.Add(1500 * time.Millisecond)
	fmt.Fprintf(inW, "start %d\n", at.UnixNano())
	if !lines.Scan() {
		t.Fatal("no started line")
	}
	ready, started, ok := barrierLine(lines.Text())
	if !ok || ready || !started.Equal(at) {
		t.Fatalf("started line %q read as ready=%v started=%v ok=%v, want the instant %v", lines.Text(), ready, started, ok, at)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if slept != 1500*time.Millisecond {
		t.Errorf("slept %s, want until the instant (1.5s)", slept)
	}
	if ctx.Err() != nil {
		t.Fatal("the run ended while the coordinator's input is open")
	}
	inW.Close()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), ErrInputClosed) {
		t.Errorf("cause %v, want ErrInputClosed", context.Cause(ctx))
	}
}

// TestBarrierInputClosedBeforeTheInstant: a coordinator that goes while a
// tenant waits ends the tenant's wait and its run.
func TestBarrierInputClosedBeforeTheInstant(t *testing.T) {
	inR, inW := io.Pipe()
	b := &Barrier{In: inR, Out: io.Discard, Now: time.Now}
	ctx, cancel := b.Watch(t.Context())
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- b.Wait(ctx) }()
	inW.Close()
	err := <-waited
	if err == nil || !strings.Contains(err.Error(), ErrInputClosed.Error()) {
		t.Errorf("Wait = %v, want the input's end", err)
	}
}

func TestBarrierLine(t *testing.T) {
	cases := []struct {
		line    string
		ready   bool
		started int64
		ok      bool
	}{
		{"dbio-barrier: ready", true, 0, true},
		{"dbio-barrier: ready\r", true, 0, true},
		{"dbio-barrier: started 1700000000123456789", false, 1700000000123456789, true},
		{"dbio-barrier: started soon", false, 0, false},
		{"results: /tmp/x", false, 0, false},
		{"  dbio-barrier: ready", false, 0, false},
	}
	for _, c := range cases {
		ready, started, ok := barrierLine(c.line)
		if ready != c.ready || ok != c.ok || (c.started != 0 && started.UnixNano() != c.started) {
			t.Errorf("barrierLine(%q) = %v %v %v", c.line, ready, started, ok)
		}
	}
}
