package results

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"dbio/internal/metrics"
)

// The fuzz targets below read results directories as a crash, a full disk,
// a hand edit or another program may have left them. Their seeds are the
// real results directories kept as the report's testdata, so `go test` runs
// them as ordinary tests. Each asserts what readers rely on beyond "no
// panic": what loads is consistent, and what dbio writes reads back.

// reportRuns are real results directories of the report's tests.
func reportRuns(f *testing.F) []string {
	f.Helper()
	runs, err := filepath.Glob(filepath.Join("..", "report", "testdata", "*", "run.json"))
	if err != nil || len(runs) == 0 {
		f.Fatalf("no results directories in ../report/testdata: %v", err)
	}
	for i, r := range runs {
		runs[i] = filepath.Dir(r)
	}
	return runs
}

// readSeed reads a seed file; a missing one is empty (a run of tenants
// on several hosts writes no series.csv of its own: its hosts' are under
// hosts/).
func readSeed(f *testing.F, path string) []byte {
	f.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzLoad writes run.json, one step's summary.json and series.csv from the
// fuzzer's bytes and loads the directory. What loads must be usable: steps
// in index order, every series row as wide as the header, a schema this dbio
// reads, and a run.json that encodes and reads back to the same run.
func FuzzLoad(f *testing.F) {
	for _, dir := range reportRuns(f) {
		steps, _ := filepath.Glob(filepath.Join(dir, "steps", "*", "summary.json"))
		step := []byte("{}")
		if len(steps) > 0 {
			step = readSeed(f, steps[0])
		}
		f.Add(readSeed(f, filepath.Join(dir, "run.json")), step, readSeed(f, filepath.Join(dir, "series.csv")))
	}
	f.Add([]byte(`{"schema_version":1,"status":"running"}`), []byte(`{"index":3}`), []byte("time,elapsed\n"))
	f.Fuzz(func(t *testing.T, run, step, series []byte) {
		dir := t.TempDir()
		write := func(rel string, b []byte) {
			p := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("run.json", run)
		write(filepath.Join("steps", "00-a", "summary.json"), step)
		write(filepath.Join("steps", "01-b", "summary.json"), []byte(`{"index":1,"name":"b"}`))
		write("series.csv", series)
		l, err := Load(dir)
		if err != nil {
			if l != nil {
				t.Fatalf("error %v with a result", err)
			}
			return
		}
		if l.Run.SchemaVersion > SchemaVersion {
			t.Errorf("loaded schema %d", l.Run.SchemaVersion)
		}
		if len(l.Steps) != 2 {
			t.Errorf("%d steps loaded", len(l.Steps))
		}
		for i := 1; i < len(l.Steps); i++ {
			if l.Steps[i-1].Index > l.Steps[i].Index {
				t.Errorf("steps out of order: %d before %d", l.Steps[i-1].Index, l.Steps[i].Index)
			}
		}
		for i, r := range l.Series.Rows {
			if len(r.Values) != len(l.Series.Columns) {
				t.Fatalf("row %d has %d values for %d columns", i, len(r.Values), len(l.Series.Columns))
			}
			for _, v := range r.Values {
				if math.IsInf(v, 0) {
					t.Errorf("row %d holds %v", i, v)
				}
			}
		}
		b, err := json.Marshal(l.Run)
		if err != nil {
			t.Fatalf("a loaded run.json does not encode: %v", err)
		}
		var again Run
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("a loaded run.json, written back, does not read: %v\n%s", err, b)
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Errorf("run.json changes when written back:\n%s\n%s", b, b2)
		}
	})
}

// FuzzSeriesRoundTrip writes rows through AppendSeries, widening the table
// as new names appear, and reads the file back: every row, step, phase and
// finite value must come back (values to the 10 significant digits they are
// written with), a NaN or infinite value as an empty cell, and a name with
// a control character in it as Printable shows it.
func FuzzSeriesRoundTrip(f *testing.F) {
	f.Add("users-1", "rampup", "tpm|cpu_user_pct|disk_vda_rps", 19560.0, 69.34673367, math.NaN(), uint16(1))
	f.Add("00-4k-randread", "measure", "fio_iops|fio_mb_s", 1e300, -0.0, 5e-324, uint16(3600))
	f.Add("a,\"b\"\nc", "", "x, y|\"z\"|", math.Inf(1), 1.0, 2.0, uint16(0))
	f.Fuzz(func(t *testing.T, step, phase, names string, v1, v2, v3 float64, gapS uint16) {
		if strings.Contains(step+phase+names, "\r") {
			// encoding/csv reads a quoted "\r\n" back as "\n"; dbio's own
			// step, phase and column names never hold a carriage return.
			return
		}
		cols := strings.Split(names, "|")
		seen := map[string]bool{}
		for _, c := range cols {
			if seen[Printable(c)] || slices.Contains(seriesBase, c) {
				return // no producer names two values alike in a second, or like a fixed column
			}
			seen[Printable(c)] = true
		}
		start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		d, err := Create(t.TempDir(), "fuzz", Run{Started: start}, start)
		if err != nil {
			t.Fatal(err)
		}
		vals := []float64{v1, v2, v3}
		var rows []SeriesRow
		for i := range 3 {
			row := SeriesRow{Time: start.Add(time.Duration(i) * time.Duration(gapS) * time.Second), Step: step, Phase: phase}
			// Row i has the first i+1 names: each row widens the table.
			for j := 0; j <= i && j < len(cols); j++ {
				row.Values = append(row.Values, Sample{Name: cols[j], Value: vals[(i+j)%3]})
			}
			rows = append(rows, row)
			if err := d.AppendSeries(row); err != nil {
				t.Fatal(err)
			}
		}
		d.Finish(StatusCompleted, nil, start)
		l, err := Load(d.Path)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Series.Rows) != len(rows) {
			t.Fatalf("%d rows written, %d read", len(rows), len(l.Series.Rows))
		}
		for i, row := range rows {
			got := l.Series.Rows[i]
			if !got.Time.Equal(row.Time) || got.Step != Printable(row.Step) || got.Phase != Printable(row.Phase) {
				t.Errorf("row %d: wrote %v %q %q, read %v %q %q", i, row.Time, row.Step, row.Phase, got.Time, got.Step, got.Phase)
			}
			if want := row.Time.Sub(start).Seconds(); got.ElapsedS != want {
				t.Errorf("row %d: elapsed %v, want %v", i, got.ElapsedS, want)
			}
			for _, s := range row.Values {
				name, v := s.Name, s.Value
				c := l.Series.Column(Printable(name))
				if c < 0 {
					t.Fatalf("row %d: no column %q in %q", i, name, l.Series.Columns)
				}
				g := got.Values[c]
				switch {
				case math.IsNaN(v) || math.IsInf(v, 0):
					if !math.IsNaN(g) {
						t.Errorf("row %d %q: %v read back as %v, want an empty cell", i, name, v, g)
					}
				case math.Abs(g-v) > 5e-10*math.Abs(v):
					t.Errorf("row %d %q: wrote %v, read %v", i, name, v, g)
				}
			}
		}
	})
}

// FuzzReadHistogram reads a latency-<type>.hdr file: it either fails or
// gives a histogram whose percentiles are in order and within its range.
func FuzzReadHistogram(f *testing.F) {
	h := metrics.NewHistogram()
	for _, us := range []int64{120, 150, 180, 900, 4000, 4000, 250000} {
		if err := h.RecordValue(us); err != nil {
			f.Fatal(err)
		}
	}
	dir := f.TempDir()
	p := filepath.Join(dir, "latency-total.hdr")
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if err := writeHistogram(p, "total", h, start, start.Add(time.Minute)); err != nil {
		f.Fatal(err)
	}
	written := readSeed(f, p)
	f.Add(written)
	f.Add(append(append([]byte(nil), written...), written...)) // two intervals, merged on reading
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "latency.hdr")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := ReadHistogram(p)
		if err != nil {
			if h != nil {
				t.Fatalf("error %v with a histogram", err)
			}
			return
		}
		if h.TotalCount() < 0 {
			t.Errorf("total count %d", h.TotalCount())
		}
		p50, p99, max := h.ValueAtQuantile(50), h.ValueAtQuantile(99), h.Max()
		if h.TotalCount() > 0 && !(h.Min() <= p50 && p50 <= p99 && p99 <= max) {
			t.Errorf("min %d, p50 %d, p99 %d, max %d out of order", h.Min(), p50, p99, max)
		}
		if math.IsNaN(h.Mean()) || math.IsInf(h.Mean(), 0) {
			t.Errorf("mean %v", h.Mean())
		}
	})
}

// FuzzReadSeries reads a series.csv as it may be left: torn, hand-edited
// or not CSV at all.
func FuzzReadSeries(f *testing.F) {
	for _, dir := range reportRuns(f) {
		f.Add(readSeed(f, filepath.Join(dir, "series.csv")))
	}
	f.Add([]byte("time,elapsed_s\n"))
	f.Add([]byte("time,elapsed_s,step,phase,x\n2026-11-22T00:34:10Z,1,a,measure,Inf\n2026-11-22T00:34:11Z,NaN,a,measure,1\n2026-11-22T00:34:1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "series.csv")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := readSeries(p)
		if err != nil {
			if !reflect.DeepEqual(s, Series{}) {
				t.Errorf("error %v with a series", err)
			}
			return
		}
		for i, r := range s.Rows {
			if math.IsNaN(r.ElapsedS) || math.IsInf(r.ElapsedS, 0) {
				t.Errorf("row %d at %v s", i, r.ElapsedS)
			}
			if len(r.Values) != len(s.Columns) {
				t.Fatalf("row %d has %d values for %d columns", i, len(r.Values), len(s.Columns))
			}
			for _, v := range r.Values {
				if math.IsInf(v, 0) {
					t.Errorf("row %d holds %v: a chart scaled to it shows nothing else", i, v)
				}
			}
		}
	})
}
