package results

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Fixed leading columns of series.csv.
var seriesBase = []string{"time", "elapsed_s", "step", "phase"}

// Sample is one named value of a per-second row.
type Sample struct {
	Name  string
	Value float64
}

// SeriesRow is one second of a run.
type SeriesRow struct {
	Time time.Time
	Step string
	// Phase is "rampup", "measure" or another producer-defined phase name.
	Phase  string
	Values []Sample
}

type seriesFile struct {
	path    string
	start   time.Time
	columns []string
	index   map[string]int
	f       *os.File
	w       *csv.Writer
}

// AppendSeries adds one row to series.csv and flushes it, so the file is
// complete up to the last second even if the process dies. A value under a
// name not seen before widens the table: the file is rewritten once with the
// new column, earlier rows left empty in it.
func (d *Dir) AppendSeries(row SeriesRow) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.series == nil {
		s, err := openSeries(filepath.Join(d.Path, "series.csv"), d.run.Started)
		if err != nil {
			return d.check(err)
		}
		d.series = s
	}
	return d.check(d.series.append(row))
}

func openSeries(path string, start time.Time) (*seriesFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("series: %w", err)
	}
	s := &seriesFile{path: path, start: start, f: f, w: csv.NewWriter(f), index: map[string]int{}}
	for _, c := range seriesBase {
		s.addColumn(c)
	}
	if err := s.w.Write(s.columns); err != nil {
		return nil, err
	}
	s.w.Flush()
	return s, s.w.Error()
}

func (s *seriesFile) addColumn(name string) {
	s.index[name] = len(s.columns)
	s.columns = append(s.columns, name)
}

func (s *seriesFile) append(row SeriesRow) error {
	widened := false
	for _, v := range row.Values {
		if _, ok := s.index[v.Name]; !ok {
			s.addColumn(v.Name)
			widened = true
		}
	}
	if widened {
		if err := s.rewrite(); err != nil {
			return err
		}
	}
	rec := make([]string, len(s.columns))
	rec[0] = row.Time.UTC().Format(time.RFC3339)
	rec[1] = strconv.FormatFloat(row.Time.Sub(s.start).Seconds(), 'f', 3, 64)
	rec[2] = row.Step
	rec[3] = row.Phase
	for _, v := range row.Values {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			continue
		}
		rec[s.index[v.Name]] = strconv.FormatFloat(v.Value, 'g', 10, 64)
	}
	if err := s.w.Write(rec); err != nil {
		return fmt.Errorf("series: %w", err)
	}
	s.w.Flush()
	return s.w.Error()
}

// rewrite re-reads the file and writes it back under the widened header.
func (s *seriesFile) rewrite() error {
	s.w.Flush()
	s.f.Close()
	in, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("series: %w", err)
	}
	old, err := csv.NewReader(bufio.NewReader(in)).ReadAll()
	in.Close()
	if err != nil {
		return fmt.Errorf("series: %w", err)
	}
	tmp := s.path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("series: %w", err)
	}
	w := csv.NewWriter(out)
	w.Write(s.columns)
	for _, rec := range old[1:] {
		wide := make([]string, len(s.columns))
		copy(wide, rec)
		w.Write(wide)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		out.Close()
		return fmt.Errorf("series: %w", err)
	}
	out.Close()
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("series: %w", err)
	}
	f, err := os.OpenFile(s.path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("series: %w", err)
	}
	s.f, s.w = f, csv.NewWriter(f)
	return nil
}

func (s *seriesFile) close() {
	s.w.Flush()
	s.f.Close()
}
