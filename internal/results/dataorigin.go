package results

import "time"

// What a run's data was when its steps began (DataOrigin.State).
const (
	// DataLoaded is data the run loaded itself.
	DataLoaded = "loaded"
	// DataReset is data restored from a pristine copy of an earlier load.
	DataReset = "reset"
	// DataReused is data as earlier runs left it, their changes included.
	DataReused = "reused"
)

// DataOrigin is what a run's data was when its steps began, and the data
// policy (--data) that made it so.
type DataOrigin struct {
	// Policy is the run's --data: fresh, reset or reuse.
	Policy string `json:"policy"`
	// State is DataLoaded, DataReset or DataReused.
	State string `json:"state"`
	// Copy is the pristine copy of a --data reset run: the one it was
	// restored from (State DataReset), or the one it made after its load
	// (State DataLoaded).
	Copy *PristineCopy `json:"copy,omitempty"`
	// ResetSeconds is how long the restore took (State DataReset).
	ResetSeconds float64 `json:"reset_seconds,omitempty"`
	// ResetBytes are the bytes the restore copied or cloned.
	ResetBytes int64 `json:"reset_bytes,omitempty"`
	// ResetMethod is how the restore copied them: reflink, copy, template.
	ResetMethod string `json:"reset_method,omitempty"`
}

// PristineCopy is a loaded database kept as it was when its load ended.
type PristineCopy struct {
	// Made is when the copy was made.
	Made time.Time `json:"made"`
	// Method is how: reflink (a copy-on-write clone), copy (every byte)
	// or template (a database the server copied).
	Method string `json:"method"`
	// Bytes is what the copy holds; Seconds how long making it took.
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	// Path is where it is: its directory in dbio's directory on the data target.
	Path string `json:"path,omitempty"`
}
