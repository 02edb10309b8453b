// Package fioformat reads fio's formats as dbio keeps them: the json+
// report of a run (on this machine, or through fio's client from several
// servers), the per-second averaged logs and latency histogram logs, and
// those logs summed into measured seconds. Every parser takes an
// io.Reader; what it reads is fio's own figures, recorded in the results
// contract's types, so that the code that runs fio and the code that reads
// a results directory again read them alike.
package fioformat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"

	"dbio/internal/results"
)

// ErrNoOutput is returned by Parse when fio's output holds no JSON report,
// which happens when fio stops before its first job starts.
var ErrNoOutput = errors.New("no JSON report in fio output")

// Output is what dbio reads from one fio run's json+ report. Every figure is
// fio's own; nothing here is recomputed.
type Output struct {
	FioVersion  string `json:"fio_version"`
	TimestampMS int64  `json:"timestamp_ms"`
	// GlobalOptions are the job file's [global] section as fio read it.
	GlobalOptions map[string]string `json:"global_options,omitempty"`
	// Notes are the lines fio printed before its JSON report
	// ("fio: terminating on signal 15", engine notes...).
	Notes []string `json:"notes,omitempty"`
	// Groups has one entry per reporting group: with group_reporting, as dbio
	// writes its jobs, that is one per measured point.
	Groups []Group `json:"groups"`
}

// Group is one reporting group of fio's report.
type Group struct {
	Name string `json:"name"`
	// Host is the fio server that ran the group, as fio's client names it
	// (the address given to --client); empty when fio ran here.
	Host    string `json:"host,omitempty"`
	GroupID int    `json:"group_id"`
	// Error is the errno fio reports for the group; 0 when all went well.
	Error int `json:"error"`
	// ElapsedS is the wall time of the group, ramp included.
	ElapsedS int `json:"elapsed_s"`
	// JobRuntimeMS is the measured runtime summed over the group's jobs.
	JobRuntimeMS int64             `json:"job_runtime_ms"`
	Options      map[string]string `json:"options"`
	// FioDirections are fio's figures for the group.
	results.FioDirections
	// UsrCPU and SysCPU are fio's own CPU use as fio reports it: per job, in
	// percent of one CPU over the job's runtime.
	UsrCPU float64 `json:"usr_cpu_pct"`
	SysCPU float64 `json:"sys_cpu_pct"`
	// ContextSwitches of fio's jobs.
	ContextSwitches int64                   `json:"context_switches"`
	SteadyState     *results.FioSteadyState `json:"steady_state,omitempty"`
}

// Parse reads fio's --output-format=json (or json+) report. Lines fio prints
// before the report (notes, "terminating on signal") are kept as Notes.
func Parse(r io.Reader) (*Output, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read fio output: %w", err)
	}
	start := jsonStart(data)
	if start < 0 {
		return nil, ErrNoOutput
	}
	out := &Output{}
	sc := bufio.NewScanner(bytes.NewReader(data[:start]))
	for sc.Scan() {
		if line := string(bytes.TrimSpace(sc.Bytes())); line != "" {
			out.Notes = append(out.Notes, line)
		}
	}
	raw, _, _, err := lastReport(data, start)
	if err != nil {
		return nil, fmt.Errorf("fio output is not a complete JSON report (was fio stopped while writing it?): %w", err)
	}
	return raw.output(out)
}

// lastReport decodes the last complete report of fio's output, the first
// opening at start, and says where it begins and ends. Run with
// --status-interval, fio writes a report every interval before its final
// one: the last complete report is the run's.
func lastReport(data []byte, start int) (raw rawOutput, from, to int, err error) {
	raw, n, err := decodeReport(data[start:])
	if err != nil {
		return raw, 0, 0, err
	}
	from, to = start, start+n
	for {
		next := jsonStart(data[to:])
		if next < 0 {
			return raw, from, to, nil
		}
		later, m, err := decodeReport(data[to+next:])
		if err != nil {
			return raw, from, to, nil
		}
		raw, from, to = later, to+next, to+next+m
	}
}

// FinalReport is fio's output with only its final report: the notes fio
// printed before its first report, then its last complete one, as fio
// wrote them. The reports fio wrote every --status-interval are dropped,
// each as large as the final one. Output without a complete report is
// returned as it is.
func FinalReport(data []byte) []byte {
	start := jsonStart(data)
	if start < 0 {
		return data
	}
	_, from, to, err := lastReport(data, start)
	if err != nil {
		return data
	}
	out := append(slices.Clip(data[:start]), data[from:to]...)
	return append(out, '\n')
}

// decodeReport decodes the report data opens with, and says how many
// bytes it took.
func decodeReport(data []byte) (rawOutput, int, error) {
	var raw rawOutput
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return raw, 0, err
	}
	return raw, int(dec.InputOffset()), nil
}

// output fills out with the report's groups.
func (raw rawOutput) output(out *Output) (*Output, error) {
	out.FioVersion = raw.Version
	out.TimestampMS = raw.TimestampMS
	out.GlobalOptions = raw.Global
	for _, j := range raw.Jobs {
		g, err := j.group()
		if err != nil {
			return nil, fmt.Errorf("fio job %q: %w", j.Name, err)
		}
		out.Groups = append(out.Groups, g)
	}
	for _, j := range raw.Clients {
		if j.Name == allClients {
			continue
		}
		g, err := j.group()
		if err != nil {
			return nil, fmt.Errorf("fio job %q on %s: %w", j.Name, j.Hostname, err)
		}
		g.Host = j.Hostname
		out.Groups = append(out.Groups, g)
	}
	return out, nil
}

// jsonStart finds the '{' that opens the report: the first one at the start of a line.
func jsonStart(data []byte) int {
	for i := 0; i < len(data); i++ {
		if data[i] == '{' && (i == 0 || data[i-1] == '\n') {
			return i
		}
	}
	return -1
}

type rawOutput struct {
	Version     string            `json:"fio version"`
	TimestampMS int64             `json:"timestamp_ms"`
	Global      map[string]string `json:"global options"`
	Jobs        []rawJob          `json:"jobs"`
	// Clients are the groups of a run through fio's client (--client), one
	// per server and group, and fio's own sum of them ("All clients").
	Clients []rawJob `json:"client_stats"`
}

// allClients is the job name of the sum fio's client adds over its
// servers' groups: a sum of everything, percentiles included, over windows
// that need not overlap; dbio computes fleet figures itself.
const allClients = "All clients"

type rawJob struct {
	Name        string            `json:"jobname"`
	Hostname    string            `json:"hostname"`
	GroupID     int               `json:"groupid"`
	Error       int               `json:"error"`
	Elapsed     int               `json:"elapsed"`
	JobRuntime  int64             `json:"job_runtime"`
	Options     map[string]string `json:"job options"`
	Read        *rawDir           `json:"read"`
	Write       *rawDir           `json:"write"`
	Mixed       *rawDir           `json:"mixed"`
	UsrCPU      float64           `json:"usr_cpu"`
	SysCPU      float64           `json:"sys_cpu"`
	Ctx         int64             `json:"ctx"`
	SteadyState *rawSteady        `json:"steadystate"`
}

type rawDir struct {
	IOBytes  int64   `json:"io_bytes"`
	BWBytes  float64 `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	Runtime  int64   `json:"runtime"`
	TotalIOs int64   `json:"total_ios"`
	Slat     rawLat  `json:"slat_ns"`
	Clat     rawLat  `json:"clat_ns"`
	Lat      rawLat  `json:"lat_ns"`
}

type rawLat struct {
	Min        float64                `json:"min"`
	Max        float64                `json:"max"`
	Mean       float64                `json:"mean"`
	Stddev     float64                `json:"stddev"`
	N          int64                  `json:"N"`
	Percentile map[string]json.Number `json:"percentile"`
	Bins       map[string]json.Number `json:"bins"`
}

type rawSteady struct {
	SS           string          `json:"ss"`
	Duration     int             `json:"duration"`
	Attained     int             `json:"attained"`
	Criterion    string          `json:"criterion"`
	MaxDeviation float64         `json:"max_deviation"`
	Slope        float64         `json:"slope"`
	Data         rawSteadyWindow `json:"data"`
}

type rawSteadyWindow struct {
	BWMean   float64 `json:"bw_mean"`
	IOPSMean float64 `json:"iops_mean"`
	IOPS     []int64 `json:"iops"`
	BW       []int64 `json:"bw"`
}

func (j rawJob) group() (Group, error) {
	if err := notNegative(map[string]float64{"elapsed": float64(j.Elapsed), "job_runtime": float64(j.JobRuntime),
		"usr_cpu": j.UsrCPU, "sys_cpu": j.SysCPU, "ctx": float64(j.Ctx), "error": float64(j.Error)}); err != nil {
		return Group{}, err
	}
	g := Group{
		Name: j.Name, GroupID: j.GroupID, Error: j.Error, ElapsedS: j.Elapsed,
		JobRuntimeMS: j.JobRuntime, Options: j.Options,
		UsrCPU: j.UsrCPU, SysCPU: j.SysCPU, ContextSwitches: j.Ctx,
	}
	var err error
	if g.Read, err = j.Read.direction(); err != nil {
		return g, fmt.Errorf("read: %w", err)
	}
	if g.Write, err = j.Write.direction(); err != nil {
		return g, fmt.Errorf("write: %w", err)
	}
	if g.Total, err = j.Mixed.direction(); err != nil {
		return g, fmt.Errorf("mixed: %w", err)
	}
	if s := j.SteadyState; s != nil {
		if err := notNegative(map[string]float64{"steadystate iops_mean": s.Data.IOPSMean, "steadystate bw_mean": s.Data.BWMean}); err != nil {
			return g, err
		}
		g.SteadyState = &results.FioSteadyState{
			Criterion: s.SS, WindowS: s.Duration, Attained: s.Attained != 0, Value: s.Criterion,
			WindowIOPSMean: s.Data.IOPSMean, WindowMBPerSec: s.Data.BWMean / 1e6,
			WindowIOPS: s.Data.IOPS, WindowBytesRate: s.Data.BW,
		}
	}
	return g, nil
}

// direction converts one side; a side without any I/O is nil.
func (d *rawDir) direction() (*results.FioDirection, error) {
	if d == nil || d.TotalIOs == 0 && d.IOBytes == 0 {
		return nil, nil
	}
	if err := notNegative(map[string]float64{"total_ios": float64(d.TotalIOs), "io_bytes": float64(d.IOBytes),
		"bw_bytes": d.BWBytes, "iops": d.IOPS, "runtime": float64(d.Runtime)}); err != nil {
		return nil, err
	}
	clat, err := d.Clat.latency()
	if err != nil {
		return nil, err
	}
	slat, err := d.Slat.latency()
	if err != nil {
		return nil, err
	}
	lat, err := d.Lat.latency()
	if err != nil {
		return nil, err
	}
	out := &results.FioDirection{
		IOs: d.TotalIOs, Bytes: d.IOBytes, BytesPerSec: d.BWBytes, IOPS: d.IOPS, RuntimeMS: d.Runtime,
		Completion: clat, Submission: slat, Total: lat,
	}
	if len(d.Clat.Bins) > 0 {
		out.Bins = make(map[int64]int64, len(d.Clat.Bins))
		for k, v := range d.Clat.Bins {
			ns, err := strconv.ParseInt(k, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("latency bin %q: %w", k, err)
			}
			n, err := v.Int64()
			if err != nil {
				return nil, fmt.Errorf("latency bin %q count %q: %w", k, v, err)
			}
			if ns < 0 || n < 0 {
				return nil, fmt.Errorf("latency bin %q holds %d: fio never reports a negative latency or count, so the report is damaged", k, n)
			}
			out.Bins[ns] = n
		}
	}
	return out, nil
}

func (l rawLat) latency() (results.FioLatency, error) {
	out := results.FioLatency{N: l.N, MinUS: l.Min / 1000, MaxUS: l.Max / 1000, MeanUS: l.Mean / 1000, StdevUS: l.Stddev / 1000}
	if err := notNegative(map[string]float64{"N": float64(l.N), "min": l.Min, "max": l.Max, "mean": l.Mean, "stddev": l.Stddev}); err != nil {
		return out, err
	}
	for k, v := range l.Percentile {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil {
			return out, fmt.Errorf("percentile key %q: %w", k, err)
		}
		if !(p >= 0 && p <= 100) {
			return out, fmt.Errorf("percentile key %q is not between 0 and 100", k)
		}
		ns, err := v.Float64()
		if err != nil {
			return out, fmt.Errorf("percentile %q value %q: %w", k, v, err)
		}
		if ns < 0 {
			return out, fmt.Errorf("percentile %q is %v: fio never reports a negative latency, so the report is damaged", k, ns)
		}
		out.Percentiles = append(out.Percentiles, results.FioPercentile{P: p, US: ns / 1000})
	}
	sort.Slice(out.Percentiles, func(i, j int) bool { return out.Percentiles[i].P < out.Percentiles[j].P })
	for i := 1; i < len(out.Percentiles); i++ {
		if out.Percentiles[i].P == out.Percentiles[i-1].P {
			return out, fmt.Errorf("percentile %v is given twice", out.Percentiles[i].P)
		}
	}
	return out, nil
}

// notNegative checks figures fio never reports below zero: a report with one
// is damaged, and its figures would be wrong in every table built on it.
func notNegative(figures map[string]float64) error {
	names := make([]string, 0, len(figures))
	for name, v := range figures {
		if v < 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return fmt.Errorf("%s is %v: fio never reports it below zero, so the report is damaged", names[0], figures[names[0]])
}

// HostGroups are the report's groups of the fio server at addr, as fio's
// client names it (the address given to --client).
func (o *Output) HostGroups(addr string) []Group {
	var out []Group
	for _, g := range o.Groups {
		if g.Host == addr {
			out = append(out, g)
		}
	}
	return out
}

// HostReport is the report of fio's client (json+) with only the entries
// of the server at addr in client_stats, every field as fio wrote it: the
// report of that server's part of the run. An unreadable report gives the
// whole text, for the record.
func HostReport(report []byte, addr string) ([]byte, error) {
	start := jsonStart(report)
	if start < 0 {
		return report, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(report[start:], &top); err != nil {
		return report, nil
	}
	var clients []json.RawMessage
	if err := json.Unmarshal(top["client_stats"], &clients); err != nil {
		return report, nil
	}
	var mine []json.RawMessage
	for _, c := range clients {
		var who struct {
			Hostname string `json:"hostname"`
		}
		if json.Unmarshal(c, &who) == nil && who.Hostname == addr {
			mine = append(mine, c)
		}
	}
	b, err := json.Marshal(mine)
	if err != nil {
		return nil, err
	}
	top["client_stats"] = b
	return json.MarshalIndent(top, "", "  ")
}
