package runner

import (
	"io"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/telemetry"
)

// recording is where a body writes its steps and per-second series, and
// how it samples: the part every body shares.
type recording struct {
	// Tick is the sampling interval; one second unless a test shortens it.
	Tick time.Duration
	Dir  *results.Dir
	// FirstIndex numbers the body's first step (the fio pass may have written steps).
	FirstIndex int
	// Sampler, when set, adds telemetry to every row and step.
	Sampler Sampler
	Now     func() time.Time
	Log     io.Writer
	// Live, when set, is given every row as it is written (a live feed
	// for dashboards).
	Live Publisher
}

// Sampler is the per-second telemetry a body drives; *telemetry.Sampler implements it.
type Sampler interface {
	Sample(now time.Time) []telemetry.Point
	StartStep()
	StepSummary() results.TelemetrySummary
}

// Publisher takes each per-second row as the run writes it.
type Publisher interface {
	Publish(row results.SeriesRow)
}

func (r *recording) defaults() {
	if r.Tick <= 0 {
		r.Tick = time.Second
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
}

// StartStep opens a new telemetry window.
func (r *recording) StartStep() {
	if r.Sampler != nil {
		r.Sampler.StartStep()
	}
}

// AppendRow writes one per-second row, with the telemetry sampled at its
// time. A failed write is kept by the directory (Dir.Err), which stops the run.
func (r *recording) AppendRow(row results.SeriesRow) {
	if r.Sampler != nil {
		for _, p := range r.Sampler.Sample(row.Time) {
			row.Values = append(row.Values, results.Sample(p))
		}
	}
	_ = r.Dir.AppendSeries(row)
	if r.Live != nil {
		r.Live.Publish(row)
	}
}

// concludeTelemetry closes the step's telemetry window into step: the
// summary, and each device's latency as the figures <dev>_latency_mean and
// <dev>_latency_<worst>, worst picking the spread's figure the body
// reads. It returns the devices' latencies for the step's detail.
func (r *recording) concludeTelemetry(step *results.Step, worst string, pick func(results.LatencySpread) float64) map[string]results.LatencySpread {
	sum := r.StepTelemetry()
	if sum == nil {
		return nil
	}
	latency := diskLatency(*sum)
	for dev, s := range latency {
		step.Figures = append(step.Figures, results.DeviceLatency(dev, "mean").With(s.Mean), results.DeviceLatency(dev, worst).With(pick(s)))
	}
	step.Telemetry = sum
	return latency
}

// StepTelemetry closes the telemetry window into its summary; nil without a sampler.
func (r *recording) StepTelemetry() *results.TelemetrySummary {
	if r.Sampler == nil {
		return nil
	}
	sum := analysis.Conclude(r.Sampler.StepSummary())
	return &sum
}
