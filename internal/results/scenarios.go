package results

import (
	"strings"
	"time"
)

// The kinds of the steps a backup run and a noisy-neighbour study write
// beside their workload's, each with its typed record as the step's detail.
const (
	KindBackup  = "backup"
	KindRestore = "restore"
	// KindNoisyPrefix starts the kind of a noisy-neighbour phase's
	// aggregate step: "noisy-" and the phase's name ("noisy-quiet").
	KindNoisyPrefix = "noisy-"
)

// IsNoisyPhase says whether kind is a noisy-neighbour phase's aggregate step.
func IsNoisyPhase(kind string) bool { return strings.HasPrefix(kind, KindNoisyPrefix) }

// BackupDetail is the record of a backup or restore step (Step.Backup).
type BackupDetail struct {
	Op       string    `json:"op"` // backup or restore
	Cycle    int       `json:"cycle"`
	Tool     string    `json:"tool"`
	Path     string    `json:"path"`
	Bytes    int64     `json:"bytes"`
	Seconds  float64   `json:"seconds"`
	MBPerSec float64   `json:"mb_per_sec"`
	PerSec   []float64 `json:"per_second_mb"`
	// Rows are the tables' row counts after a restore.
	Rows   map[string]int64 `json:"rows,omitempty"`
	Checks []Check          `json:"checks,omitempty"`
	// Verified says whether a restored database passed its checks; nil for a backup.
	Verified *bool `json:"verified,omitempty"`
	// Latency is disk latency (ms) over the step's per-second samples, per device and direction.
	Latency map[string]LatencySpread `json:"disk_latency_ms,omitempty"`
}

// LatencySpread is a mean, 99th percentile and maximum over per-second samples.
type LatencySpread struct {
	Mean float64 `json:"mean"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// NoisyDetail is the record of a noisy-neighbour phase's aggregate step (Step.Noisy).
type NoisyDetail struct {
	Phase   string        `json:"phase"`
	Tenants []NoisyTenant `json:"tenants"`
	Backups []NoisyBackup `json:"backups,omitempty"`
	// Latency is disk latency (ms) over the phase's per-second samples, per device and direction.
	Latency map[string]LatencySpread `json:"disk_latency_ms,omitempty"`
}

// NoisyTenant is one tenant's throughput in a phase, and against the quiet baseline.
type NoisyTenant struct {
	Name       string  `json:"name"`
	TPM        float64 `json:"tpm"`
	NOPM       float64 `json:"nopm"`
	P99MS      float64 `json:"p99_ms"`
	VsQuietPct float64 `json:"vs_quiet_pct,omitempty"`
}

// NoisyBackup is one backup a neighbour took during the interference phase,
// its start on the clock of the machine that took it.
type NoisyBackup struct {
	Tenant  string    `json:"tenant"`
	Cycle   int       `json:"cycle"`
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
	Bytes   int64     `json:"bytes"`
	MBPerS  float64   `json:"mb_per_s"`
	Error   string    `json:"error,omitempty"`
}
