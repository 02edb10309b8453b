package report

import (
	"dbio/internal/results"
	"dbio/internal/units"
)

// dataReset says where a reset run's data came from, "" unless the run
// restored a pristine copy: "reset from the pristine copy made 2026-…
// (copy, 1.2 GiB in 0.8 s)".
func dataReset(ld *results.LoadReport) string {
	d := ld.Data
	if d == nil || d.State != results.DataReset || d.Copy == nil {
		return ""
	}
	return "reset from the pristine copy made " + stamp(d.Copy.Made) + " (" + d.ResetMethod + ", " +
		units.FormatBytes(uint64(max(d.ResetBytes, 0))) + " in " + fixed(d.ResetSeconds, 1) + " s)"
}

// dataReused says that reused data is as earlier runs left it, for runs
// that recorded their policy.
func dataReused(ld *results.LoadReport) string {
	if ld.Data == nil || ld.Data.State != results.DataReused {
		return ""
	}
	return ", as earlier runs left it (their changes included)"
}

// pristineKept says what copy a --data reset run kept after its load, ""
// when it kept none.
func pristineKept(ld *results.LoadReport) string {
	d := ld.Data
	if d == nil || d.State != results.DataLoaded || d.Copy == nil {
		return ""
	}
	return "kept a pristine copy for --data reset (" + d.Copy.Method + ", " + units.FormatBytes(uint64(max(d.Copy.Bytes, 0))) +
		" in " + fixed(d.Copy.Seconds, 1) + " s)"
}
