package results

import (
	"math"
	"time"
)

// PhaseName names one part of a run's time in run.json's phases.
type PhaseName string

// The parts of a run's time, in the order a database run goes through them.
const (
	// PhaseSetup is readying the machine: the block-I/O and memory caps,
	// the kernel's delay accounting.
	PhaseSetup PhaseName = "setup"
	// PhaseDevicePass is a fio pass before the body (dbio quick, a
	// suite's disk run): its layout and points.
	PhaseDevicePass PhaseName = "device_pass"
	// PhaseServerStart is the engine started (a managed server's initdb
	// or install and its start, a DSN's connection), up to its load.
	PhaseServerStart PhaseName = "server_start"
	// PhaseReset is the pristine copy restored in place of the database
	// (--data reset); PhaseLoad the workload's load, or its check that
	// the data there may be reused; PhasePristineCopy the copy kept
	// after a load.
	PhaseReset        PhaseName = "reset"
	PhaseLoad         PhaseName = "load"
	PhasePristineCopy PhaseName = "pristine_copy"
	// PhaseRampUps and PhaseMeasurements are the steps' ramp-ups and
	// measured times summed; PhaseStepsOther is the rest of the steps'
	// time: users connecting and stopping, each step's figures,
	// histograms and telemetry written.
	PhaseRampUps      PhaseName = "ramp_ups"
	PhaseMeasurements PhaseName = "measurements"
	PhaseStepsOther   PhaseName = "steps_other"
	// PhaseChecks are the workload's consistency checks after its steps.
	PhaseChecks PhaseName = "checks"
	// PhaseServerStop is the engine stopped (a managed server's shutdown),
	// the last part before the run's directory is finished.
	PhaseServerStop PhaseName = "server_stop"
)

// Phase is how long one part of a run took, measured on the clock of the
// machine that ran it.
type Phase struct {
	Name    PhaseName `json:"name"`
	Seconds float64   `json:"seconds"`
	// Detail says how the part was done where there is more than one
	// way: how the data was reset, why checks were skipped.
	Detail string `json:"detail,omitempty"`
}

// PhaseSince is the phase name that began at began and ends at now.
func PhaseSince(name PhaseName, began, now time.Time, detail string) Phase {
	return Phase{Name: name, Seconds: PhaseRound(now.Sub(began).Seconds()), Detail: detail}
}

// PhaseRound is seconds to the millisecond, as phases record them: finer
// than the clock's reading of a part is worth and than a reader needs.
func PhaseRound(s float64) float64 { return math.Round(s*1000) / 1000 }

// PhaseSeconds is the seconds run.json records for the phase of that
// name, summed over its entries (a phase recorded more than once, as a
// run's servers each stopping, is their total); ok says there was one.
func (r Run) PhaseSeconds(name PhaseName) (s float64, ok bool) {
	for _, p := range r.Phases {
		if p.Name == name {
			s, ok = s+p.Seconds, true
		}
	}
	return s, ok
}
