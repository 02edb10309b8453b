package results

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Loaded is a results directory read back.
type Loaded struct {
	Path   string
	Run    Run
	Steps  []Step
	Series Series
}

// Series is series.csv read back: one float per column per row, NaN where empty.
type Series struct {
	Columns []string
	Rows    []LoadedRow
}

// LoadedRow is one second of series.csv.
type LoadedRow struct {
	Time     time.Time
	ElapsedS float64
	Step     string
	Phase    string
	Values   []float64 // aligned with Columns; NaN where the row had no value
}

// Column returns the index of the named value column, or -1.
func (s Series) Column(name string) int {
	for i, c := range s.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// Load reads a results directory. A run that is still running or was
// interrupted loads as far as it got. A run.json that says running when no
// dbio holds the directory any more loads as abandoned, and is rewritten so
// (see settleAbandoned).
func Load(path string) (*Loaded, error) { return load(path, true) }

// LoadSummary reads a results directory's run and step summaries without
// its per-second series: enough to list runs by their headline figures.
func LoadSummary(path string) (*Loaded, error) { return load(path, false) }

func load(path string, withSeries bool) (*Loaded, error) {
	b, err := os.ReadFile(filepath.Join(path, "run.json"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a dbio results directory (no run.json)", path)
		}
		return nil, err
	}
	l := &Loaded{Path: path}
	if err := json.Unmarshal(b, &l.Run); err != nil {
		return nil, fmt.Errorf("%s/run.json: %w", path, err)
	}
	if l.Run.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s was written by a newer dbio (schema %d, this dbio reads up to %d): upgrade dbio", path, l.Run.SchemaVersion, SchemaVersion)
	}
	if l.Run.Status == StatusRunning {
		settleAbandoned(path, &l.Run)
	}
	dirs, _ := filepath.Glob(filepath.Join(path, "steps", "*", "summary.json"))
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var s Step
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		l.Steps = append(l.Steps, s)
	}
	sort.Slice(l.Steps, func(i, j int) bool { return l.Steps[i].Index < l.Steps[j].Index })
	if !withSeries {
		return l, nil
	}
	l.Series, err = readSeries(filepath.Join(path, "series.csv"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return l, nil
}

// readJSON decodes the JSON file at path into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func readSeries(path string) (Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return Series{}, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return Series{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return Series{}, nil
	}
	nb := len(seriesBase)
	if len(recs[0]) < nb || !slices.Equal(recs[0][:nb], seriesBase) {
		if len(recs) == 1 {
			return Series{}, nil // a header torn by a crash as it was written: no rows yet
		}
		return Series{}, fmt.Errorf("%s: the header does not start with %s: this is not a series dbio wrote", path, strings.Join(seriesBase, ","))
	}
	s := Series{Columns: append([]string(nil), recs[0][nb:]...)}
	for _, rec := range recs[1:] {
		if len(rec) < nb {
			continue // a torn last line from a crash
		}
		t, _ := time.Parse(time.RFC3339, rec[0])
		el, err := strconv.ParseFloat(rec[1], 64)
		if err != nil || math.IsNaN(el) || math.IsInf(el, 0) {
			continue // no usable time: torn, or not written by dbio
		}
		row := LoadedRow{Time: t, ElapsedS: el, Step: rec[2], Phase: rec[3], Values: make([]float64, len(s.Columns))}
		for i := range s.Columns {
			row.Values[i] = math.NaN()
			if nb+i < len(rec) && rec[nb+i] != "" {
				// dbio writes no infinite value; one here would flatten every chart scaled to it.
				if v, err := strconv.ParseFloat(rec[nb+i], 64); err == nil && !math.IsInf(v, 0) {
					row.Values[i] = v
				}
			}
		}
		s.Rows = append(s.Rows, row)
	}
	return s, nil
}

// LoadAll reads several results directories, in order.
func LoadAll(dirs []string) ([]*Loaded, error) {
	runs := make([]*Loaded, 0, len(dirs))
	for _, d := range dirs {
		l, err := Load(d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, l)
	}
	return runs, nil
}
