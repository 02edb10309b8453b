// Package results owns the results directory: the contract between measuring
// and reporting. A run writes it as it goes (run.json first, then each step's
// summary and histograms, and series.csv every second), so an interrupted run
// still leaves a valid directory; reports are rendered from it alone.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/metrics"
)

// SchemaVersion is bumped whenever a reader of an older directory would misread a newer one.
const SchemaVersion = 1

// MarkerName is the file by which dbio marks a directory it created (a
// target's working directory, a report's CSV directory) as its own: dbio
// writes into, and removes, only directories that hold it.
const MarkerName = ".dbio-owned"

// Status is where a run or step ended.
type Status string

// Run and step statuses.
const (
	StatusRunning     Status = "running"
	StatusCompleted   Status = "completed"
	StatusInterrupted Status = "interrupted"
	StatusFailed      Status = "failed"
	// StatusAbandoned is what a reader finds for a run whose dbio ended
	// without finishing it (killed, or its machine stopped): run.json still
	// said running, and no process held the directory any more.
	StatusAbandoned Status = "abandoned"
	// StatusSkipped is a suite's run that was not started because its
	// comparison had been decided before its turn (until_decided).
	StatusSkipped Status = "skipped"
)

// Run is run.json: what was asked, on what, and how it ended.
type Run struct {
	SchemaVersion int       `json:"schema_version"`
	ID            string    `json:"id"`
	Kind          string    `json:"kind"`
	Command       []string  `json:"command"`
	Started       time.Time `json:"started"`
	Ended         time.Time `json:"ended,omitzero"`
	Status        Status    `json:"status"`
	Error         string    `json:"error,omitempty"`
	// Config is the fully resolved configuration (every default filled in).
	Config      RunConfig    `json:"config"`
	Environment Environment  `json:"environment"`
	Engines     []EngineInfo `json:"engines,omitempty"`
	Checks      []Check      `json:"checks,omitempty"`
	Load        *LoadReport  `json:"load,omitempty"`
	// Figures are the run's own headline numbers, drawn from all its steps
	// (e.g. the largest load kept under a response-time ceiling).
	Figures []Figure `json:"figures,omitempty"`
	// Goal is the latency goal search of a run that searched for the
	// highest rate meeting an objective.
	Goal     *GoalSearch `json:"goal,omitempty"`
	Notes    []string    `json:"notes,omitempty"`
	Warnings []string    `json:"warnings,omitempty"`
	// Fragmentation follows the extents of dbio's database files through the
	// run: after the load, after each step, and at the end.
	Fragmentation []Fragmentation `json:"fragmentation,omitempty"`
	// Tenants is a run of database tenants on several hosts: its barrier
	// and each host's part.
	Tenants *Tenants `json:"tenants,omitempty"`
	// Hosts are a fleet run's hosts: how each fared, its clock offsets and
	// where its telemetry came from.
	Hosts []FleetHost `json:"hosts,omitempty"`
	// Thresholds are the run's --threshold bounds judged once it ended;
	// a broken one failed the command (exit code 99).
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Labels are the user's names for the run (--label), by which the
	// history finds it: "baseline", "fw-2.1".
	Labels []string `json:"labels,omitempty"`
	// Phases are how long each part of the run took, in the order they
	// ended: server start, reset or load, the steps' ramp-ups and
	// measurements, the consistency checks, the server's stop. Absent
	// from runs of older dbio.
	Phases []Phase `json:"phases,omitempty"`
}

// Fragmentation is the extent count (FIEMAP) of dbio's database files at one moment.
type Fragmentation struct {
	// At is "start", a step's name, or "end".
	At      string `json:"at"`
	Files   int    `json:"files"`
	Extents int    `json:"extents"`
	Bytes   int64  `json:"bytes"`
	// Largest are the biggest files with their extent counts.
	Largest []FileExtents `json:"largest,omitempty"`
}

// Environment is the machine and software a run measured.
type Environment struct {
	Host
	Targets  []TargetInfo      `json:"targets"`
	Versions map[string]string `json:"versions"`
}

// Host is the machine a run measured; telemetry reads it from /proc.
type Host struct {
	Hostname    string `json:"hostname"`
	Kernel      string `json:"kernel"`
	OS          string `json:"os"`
	CPUModel    string `json:"cpu_model"`
	CPUs        int    `json:"cpus"`
	MemoryBytes uint64 `json:"memory_bytes"`
}

// TargetInfo is one target of the run and what is behind it.
type TargetInfo struct {
	Role TargetRole `json:"role"`
	Path string     `json:"path"`
	// Host is the host the target is on, for a target of a fleet run
	// ("h1" for h1:/srv/data); its storage is not inspected from here.
	Host    string  `json:"host,omitempty"`
	Storage Storage `json:"storage"`
	// FreeBytes is the free space when the run started.
	FreeBytes uint64 `json:"free_bytes"`
	// FreeInodes are the inodes free when the run started, kept only when
	// they were low (target.FreeInodesIfLow): a filesystem can be full
	// with space free.
	FreeInodes *uint64 `json:"free_inodes,omitempty"`
	// Limit is the cap dbio put on the target's disks to emulate a storage
	// class, nil when the run used the device as it is.
	Limit *StorageLimit `json:"limit,omitempty"`
}

// StorageLimit is a storage-class emulation on a target's disks: what was
// capped (0 for no cap) and how.
type StorageLimit struct {
	// LimitsConfig are the caps as the run asked for them, with the
	// preset or class they came from.
	LimitsConfig
	// Mechanism is how the caps were applied: "cgroup v1", "cgroup v2".
	Mechanism string `json:"mechanism"`
}

// Check is one consistency condition's verdict.
type Check struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail,omitempty"`
	// Skipped is set when the user turned checks off; Passed is then meaningless.
	Skipped bool `json:"skipped,omitempty"`
}

// LoadReport is how the initial database was built.
type LoadReport struct {
	Seconds      float64 `json:"seconds"`
	Rows         int64   `json:"rows"`
	RowsPerSec   float64 `json:"rows_per_sec"`
	Scale        int     `json:"scale"`
	ScalePerMin  float64 `json:"scale_per_min"`
	BytesWritten int64   `json:"bytes_written"`
	MBPerSec     float64 `json:"mb_per_sec"`
	Reused       bool    `json:"reused,omitempty"`
	// Dataset is which data the run used, loaded or reused, as the load
	// recorded it in the database; absent from runs of older dbio.
	Dataset *Dataset `json:"dataset,omitempty"`
	// Data says what the run's data was when its steps began (--data);
	// absent from runs of older dbio.
	Data *DataOrigin `json:"data,omitempty"`
}

// Dataset is the identity of a workload's data: what a load recorded in
// the database beside the data, so that a later run with --reuse keeps
// only data that is what it would load itself.
type Dataset struct {
	Workload string `json:"workload"`
	// LoaderVersion is the version of the workload's loader, which changes
	// whenever it generates other data from the same settings.
	LoaderVersion int    `json:"loader_version"`
	Seed          uint64 `json:"seed"`
	// Settings are the workload's other settings the data depends on, its
	// scale first, each by the flag that sets it.
	Settings []DatasetSetting `json:"settings"`
}

// DatasetSetting is one setting a dataset was loaded with: the flag's name
// ("warehouses", "table-size") and its value as the flag takes it.
type DatasetSetting struct {
	Flag  string `json:"flag"`
	Value string `json:"value"`
}

// Figure is one headline number of a step (TPM, NOPM, IOPS...).
type Figure struct {
	Name  FigureName `json:"name"`
	Value float64    `json:"value"`
	Unit  string     `json:"unit"`
}

// Step is steps/NN-name/summary.json.
type Step struct {
	Index    int       `json:"index"`
	Name     string    `json:"name"`
	Kind     string    `json:"kind"`
	Users    int       `json:"users,omitempty"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	RampUpS  float64   `json:"ramp_up_s"`
	MeasureS float64   `json:"measured_s"`
	Status   Status    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Figures  []Figure  `json:"figures"`
	// Transactions are per type; Total merges them all.
	Transactions []metrics.TxSummary `json:"transactions,omitempty"`
	Total        *metrics.TxSummary  `json:"total,omitempty"`
	// Pacing is the offered load of a step run open loop; nil for a closed-loop step.
	Pacing *Pacing `json:"pacing,omitempty"`
	// Telemetry is what the machine did during the step's measured time.
	Telemetry *TelemetrySummary `json:"telemetry,omitempty"`
	// Warmup says how the ramp-up ended when it was to end at steady
	// state; nil for a ramp-up of fixed length.
	Warmup *SteadyWarmup `json:"warmup,omitempty"`
	// Precision says how the measurement ended when it was to end once
	// its figures were precise; nil for a measurement of fixed length.
	Precision *StepPrecision `json:"precision,omitempty"`
	// A step's record beyond its figures, stored as its "detail", is typed
	// by its kind; at most one is set. Fio is a fio point's (kind "fio").
	Fio *FioPoint `json:"-"`
	// Backup is a backup or restore's (kinds "backup" and "restore").
	Backup *BackupDetail `json:"-"`
	// Noisy is a noisy-neighbour phase's aggregate (kind "noisy-<phase>").
	Noisy *NoisyDetail `json:"-"`
	// Fleet is a step of a run of tenants on several hosts: the fleet's
	// window and each host's part (the workload's kind).
	Fleet *TenantFleet `json:"-"`
	// BlockIO is a capture's or a replay's (kinds "capture" and "replay").
	BlockIO *BlockIO `json:"-"`
	Notes   []string `json:"notes,omitempty"`
}

// SteadyWarmup is the ramp-up of a step that was to end once throughput was
// steady (fio's steady-state semantics over a rolling window of per-second
// values), or at its longest, whichever came first.
type SteadyWarmup struct {
	// Criterion is the test as given, in fio's form: "nopm_slope:0.5%".
	Criterion string `json:"criterion"`
	// WindowS is how many seconds were judged together.
	WindowS float64 `json:"window_s"`
	// IgnoredS is the start of the ramp-up left out of every window.
	IgnoredS float64 `json:"ignored_s,omitempty"`
	// LimitS is the longest the ramp-up could last.
	LimitS float64 `json:"limit_s"`
	// Reached says a window was steady before LimitS; the measurement then
	// began at once.
	Reached bool `json:"reached"`
	// AtS is when the first steady window ended, in seconds since the
	// step started: the end of the ramp-up. Zero when not reached.
	AtS float64 `json:"at_s,omitempty"`
	// Windows counts the windows judged.
	Windows int `json:"windows"`
	// Mean and Figure describe the window judged last (the steady one when
	// reached): its mean, and what the criterion compared with its limit
	// (in % of the mean when the limit is a percentage). Figure is absent
	// when no window was judged or the window's figure was not a number
	// (a second without a value, a mean of zero).
	Mean   float64  `json:"window_mean,omitempty"`
	Figure *float64 `json:"figure,omitempty"`
}

// KindFio is the kind of the steps that are fio points.
const KindFio = "fio"

// stepJSON is Step as stored, without its detail.
type stepJSON Step

// detail is the step's typed record, nil when it has none.
func (s Step) detail() any {
	switch {
	case s.Fio != nil:
		return s.Fio
	case s.Backup != nil:
		return s.Backup
	case s.Noisy != nil:
		return s.Noisy
	case s.Fleet != nil:
		return s.Fleet
	case s.BlockIO != nil:
		return s.BlockIO
	}
	return nil
}

// MarshalJSON stores the step's typed record as its "detail", before its
// notes as it always stood: the notes are written after it (Notes here is
// shallower than stepJSON's, so encoding/json writes this one only).
func (s Step) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		stepJSON
		Detail any      `json:"detail,omitempty"`
		Notes  []string `json:"notes,omitempty"`
	}{stepJSON(s), s.detail(), s.Notes})
}

// UnmarshalJSON reads the step's detail back as the record of its kind: a
// fio point's, a backup's or restore's, a noisy-neighbour phase's, a
// capture's or replay's, and any other kind's as a tenants run's fleet step
// (the only other step that has one).
func (s *Step) UnmarshalJSON(b []byte) error {
	var v struct {
		stepJSON
		Detail json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Step(v.stepJSON)
	if len(v.Detail) == 0 || string(v.Detail) == "null" {
		return nil
	}
	var into any
	switch {
	case s.Kind == KindFio:
		s.Fio = &FioPoint{}
		into = s.Fio
	case s.Kind == KindBackup || s.Kind == KindRestore:
		s.Backup = &BackupDetail{}
		into = s.Backup
	case IsNoisyPhase(s.Kind):
		s.Noisy = &NoisyDetail{}
		into = s.Noisy
	case IsBlockIO(s.Kind):
		s.BlockIO = &BlockIO{}
		into = s.BlockIO
	default:
		s.Fleet = &TenantFleet{}
		into = s.Fleet
	}
	if err := json.Unmarshal(v.Detail, into); err != nil {
		return fmt.Errorf("step %s: %s detail: %w", s.Name, s.Kind, err)
	}
	return nil
}

// Figure returns the named figure's value and whether the step has it.
func (s Step) Figure(name FigureName) (float64, bool) {
	for _, f := range s.Figures {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// Dir is a results directory being written. The run holds it locked until
// Finish; the first write that fails (a full filesystem) closes Failed, so
// that the run stops instead of measuring what it can no longer record.
type Dir struct {
	Path string

	mu     sync.Mutex
	run    Run
	series *seriesFile
	lock   *os.File

	failOnce sync.Once
	failed   chan struct{}
	failErr  error

	// stepWritten hears of each step once its summary is written, so that
	// what is judged of a step (a threshold naming it) is said as the step
	// ends rather than only once the whole run has.
	stepWritten func(Step)
}

// AfterStep has f called with each step once WriteStep has written it.
func (d *Dir) AfterStep(f func(Step)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stepWritten = f
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// NewDir makes the new directory base/<yyyymmdd-hhmmss>-<name> (base made
// first when missing), what names it in an error. Two made in the same
// second get distinct directories (-2, -3...), never a shared one.
func NewDir(base, name, what string, now time.Time) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("results directory %s: %w", base, err)
	}
	id := now.Format("20060102-150405") + "-" + strings.Trim(unsafeName.ReplaceAllString(name, "-"), "-")
	path := filepath.Join(base, id)
	for i := 2; ; i++ {
		err := os.Mkdir(path, 0o755)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("%s %s: %w", what, path, err)
		}
		path = filepath.Join(base, fmt.Sprintf("%s-%d", id, i))
	}
}

// Create makes base/<yyyymmdd-hhmmss>-<name>, locks it for the run, sets
// ReserveBytes aside in it and writes run.json with status running.
func Create(base, name string, run Run, now time.Time) (*Dir, error) {
	path, err := NewDir(base, name, "results directory", now)
	if err != nil {
		return nil, err
	}
	run.SchemaVersion = SchemaVersion
	run.ID = filepath.Base(path)
	run.Status = StatusRunning
	if run.Started.IsZero() {
		run.Started = now
	}
	d := &Dir{Path: path, run: run, failed: make(chan struct{})}
	if d.lock, err = holdLock(path, now); err == nil {
		if err = makeReserve(path); err == nil {
			err = d.writeRun()
		}
	}
	if err != nil {
		// Nothing of the run is in it yet: the directory dbio just made goes.
		if d.lock != nil {
			d.lock.Close()
		}
		os.RemoveAll(path)
		return nil, err
	}
	return d, nil
}

// Failed is closed when a write of the directory has failed; Err says why.
func (d *Dir) Failed() <-chan struct{} { return d.failed }

// Err is the first failed write of the directory, wrapping ErrWriteFailed,
// or nil.
func (d *Dir) Err() error {
	select {
	case <-d.failed:
		return d.failErr
	default:
		return nil
	}
}

// check records err, the outcome of a write, as the directory's first
// failure and returns it explained.
func (d *Dir) check(err error) error {
	if err == nil {
		return nil
	}
	err = explainWrite(d.Path, err)
	d.failOnce.Do(func() {
		d.failErr = err
		close(d.failed)
	})
	return err
}

// Run returns a copy of run.json as it stands.
func (d *Dir) Run() Run {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.run
}

// UpdateRun changes run.json and rewrites it at once.
func (d *Dir) UpdateRun(change func(*Run)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	change(&d.run)
	return d.writeRun()
}

// Finish records how the run ended. The reserve is given back first, so
// that the final run.json fits on a filesystem that filled up. A run whose
// directory could not be written in full did not complete, whatever status
// it is given. The lock is released: the run no longer writes.
func (d *Dir) Finish(status Status, runErr error, now time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.series != nil {
		d.series.close()
		d.series = nil
	}
	os.Remove(filepath.Join(d.Path, reserveName))
	if werr := d.Err(); werr != nil && status == StatusCompleted {
		status, runErr = StatusFailed, werr
	}
	d.run.Status = status
	d.run.Ended = now
	if runErr != nil {
		d.run.Error = runErr.Error()
	}
	err := d.writeRun()
	if d.lock != nil {
		if err == nil {
			os.Remove(d.lock.Name())
		}
		d.lock.Close()
		d.lock = nil
	}
	return err
}

// Discard removes the directory of a run refused after it was created but
// before it ran anything (its data was not the data it asked for): the run
// leaves nothing behind, as a refusal at the preflight leaves nothing. The
// directory and all in it are this run's, made by Create; the links it may
// hold are removed, never followed.
func (d *Dir) Discard() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.series != nil {
		d.series.close()
		d.series = nil
	}
	if d.lock != nil {
		d.lock.Close()
		d.lock = nil
	}
	return os.RemoveAll(d.Path)
}

func (d *Dir) writeRun() error {
	return d.check(WriteJSON(filepath.Join(d.Path, "run.json"), d.run))
}

// StepDir returns (creating it) the directory of step index, e.g. steps/03-users-5.
func (d *Dir) StepDir(index int, name string) (string, error) {
	dir := StepPath(d.Path, index, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", d.check(fmt.Errorf("step directory: %w", err))
	}
	return dir, nil
}

// StepPath is where the run in dir keeps step index's files.
func StepPath(dir string, index int, name string) string {
	return filepath.Join(dir, "steps", fmt.Sprintf("%02d-%s", index, unsafeName.ReplaceAllString(name, "-")))
}

// WriteStep writes a step's summary.json and one latency-<type>.hdr file per histogram.
func (d *Dir) WriteStep(s Step, hists map[string]*hdrhistogram.Histogram) error {
	dir, err := d.StepDir(s.Index, s.Name)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(hists))
	for n := range hists {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := writeHistogram(filepath.Join(dir, histogramFile(n)), n, hists[n], s.Started, s.Ended); err != nil {
			return d.check(err)
		}
	}
	if err := d.check(WriteJSON(filepath.Join(dir, "summary.json"), s)); err != nil {
		return err
	}
	d.mu.Lock()
	written := d.stepWritten
	d.mu.Unlock()
	if written != nil {
		written(s)
	}
	return nil
}

// WriteJSON writes v as indented JSON through a temporary file and a rename,
// so a reader (or a crash) never sees half a file.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic writes data to path through a temporary file and a rename.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
