package steady

import (
	"fmt"
	"math"
)

// MinWindow is the shortest window accepted, in seconds: a slope or a
// spread needs at least two values, and two seconds are too few to call a
// database steady, so three.
const MinWindow = 3

// Config is a detector's setting.
type Config struct {
	// Criterion is the test applied to each window.
	Criterion Criterion
	// Window is the number of most recent per-second values judged
	// together (fio's ss_dur at ss_interval=1s); at least MinWindow.
	Window int
	// Ramp is the number of leading seconds ignored before values are
	// collected (fio's ss_ramp); 0 collects from the first second.
	Ramp int
}

// Reached tells when steady state was first seen. Seconds count the values
// fed, from 1, ramp included: second 12 is the twelfth value.
type Reached struct {
	// Second is the last second of the first steady window: the moment a
	// live run could have stopped warming up.
	Second int
	// WindowStart is the first second of that window.
	WindowStart int
	// Check is the verdict on that window.
	Check Check
}

// Detector judges a per-second series as it arrives: Add one value per
// second and it says whether the last Window values are steady. It is not
// safe for concurrent use.
type Detector struct {
	cfg     Config
	ring    []float64 // the last Window values, oldest at next once full
	next    int
	filled  int
	second  int
	reached *Reached
	scratch []float64
}

// NewDetector checks cfg and returns a detector.
func NewDetector(cfg Config) (*Detector, error) {
	if cfg.Window < MinWindow {
		return nil, fmt.Errorf("steady-state window of %d s is too short: use at least %d s", cfg.Window, MinWindow)
	}
	if cfg.Ramp < 0 {
		return nil, fmt.Errorf("steady-state ramp of %d s is negative: use 0 or more seconds", cfg.Ramp)
	}
	if cfg.Criterion.Limit <= 0 || math.IsNaN(cfg.Criterion.Limit) {
		return nil, fmt.Errorf("steady-state criterion %s: the limit must be above zero", cfg.Criterion)
	}
	return &Detector{cfg: cfg, ring: make([]float64, cfg.Window), scratch: make([]float64, cfg.Window)}, nil
}

// Add feeds the next second's value and returns the verdict on the window
// ending with it; Full is false (and Steady too) during the ramp and until
// Window values have been collected. A NaN (a second without a sample) keeps
// every window that holds it from being steady.
func (d *Detector) Add(v float64) Status {
	d.second++
	st := Status{Second: d.second}
	if d.second <= d.cfg.Ramp {
		return st
	}
	d.ring[d.next] = v
	d.next = (d.next + 1) % len(d.ring)
	d.filled = min(d.filled+1, len(d.ring))
	if d.filled < len(d.ring) {
		return st
	}
	// Oldest first, so the slope's x runs forward in time.
	n := copy(d.scratch, d.ring[d.next:])
	copy(d.scratch[n:], d.ring[:d.next])
	st.Full = true
	st.Check = d.cfg.Criterion.Evaluate(d.scratch)
	if st.Steady && d.reached == nil {
		d.reached = &Reached{Second: d.second, WindowStart: d.second - len(d.ring) + 1, Check: st.Check}
	}
	return st
}

// Reached returns when steady state was first seen, if it was.
func (d *Detector) Reached() (Reached, bool) {
	if d.reached == nil {
		return Reached{}, false
	}
	return *d.reached, true
}

// Status is the verdict after one value.
type Status struct {
	// Second is the value's second, from 1, ramp included.
	Second int
	// Full is true once the window holds Window collected values.
	Full bool
	// Check is the verdict on the window ending at Second; zero until Full.
	Check
}

// Find replays a recorded per-second series through a detector and returns
// when it first became steady, for runs analysed after the fact.
func Find(cfg Config, series []float64) (Reached, bool, error) {
	d, err := NewDetector(cfg)
	if err != nil {
		return Reached{}, false, err
	}
	for _, v := range series {
		if d.Add(v).Steady {
			break
		}
	}
	r, ok := d.Reached()
	return r, ok, nil
}
