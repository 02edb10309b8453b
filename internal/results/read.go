package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
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
	// Every is 1 when every row of the file was kept, else the one row in
	// Every kept to stay within SeriesBudget.
	Every int
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
// (see settleAbandoned). Every file is read as OpenIn opens it: a link, a
// named pipe or a file beyond what dbio writes is refused with an error
// wrapping ErrUntrusted.
func Load(path string) (*Loaded, error) { return load(path, true) }

// LoadSummary reads a results directory's run and step summaries without
// its per-second series: enough to list runs by their headline figures.
func LoadSummary(path string) (*Loaded, error) { return load(path, false) }

func load(path string, withSeries bool) (*Loaded, error) {
	l := &Loaded{Path: path}
	if err := readJSONIn(path, "run.json", &l.Run); err != nil {
		// Nothing there, or a file where the directory should be.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, notResults(path, "results directory", "run.json")
		}
		return nil, err
	}
	if l.Run.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s was written by a newer dbio (schema %d, this dbio reads up to %d): upgrade dbio", path, l.Run.SchemaVersion, SchemaVersion)
	}
	if l.Run.Status == StatusRunning {
		settleAbandoned(path, &l.Run)
	}
	names, err := stepDirs(path)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		var s Step
		err := readJSONIn(path, filepath.Join("steps", name, "summary.json"), &s)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a step that had not finished
		}
		if err != nil {
			return nil, err
		}
		l.Steps = append(l.Steps, s)
	}
	sort.Slice(l.Steps, func(i, j int) bool { return l.Steps[i].Index < l.Steps[j].Index })
	if !withSeries {
		return l, nil
	}
	l.Series, err = readSeriesIn(path, "series.csv", SeriesBudget)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return l, nil
}

// stepDirs are the names of the step directories under path/steps, in
// name order. A link there is refused, and a file that is not a directory
// is not a step.
func stepDirs(path string) ([]string, error) {
	entries, err := ReadDirIn(path, "steps")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			return nil, untrusted(filepath.Join(path, "steps", e.Name()), "is a symbolic link")
		case e.IsDir():
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// SeriesBudget is the memory a series loaded from series.csv keeps at
// most: 8 bytes a value and about 90 a row (its time, step and phase). A
// day of one row a second and 100 columns keeps 77 MB. A longer series, or
// one dbio did not write, is thinned as it is read so as to stay within
// the budget: every second row is kept, then every fourth, and so on
// (Series.Every says which). While it reads, the row index may need half
// as much again as it keeps (its growth is a copy), and Go's collector
// lets what it has read and dropped grow up to what is kept before it
// collects it.
const SeriesBudget = 128 << 20

const (
	// maxSeriesRecord bounds one record of series.csv: a hundred columns
	// of values take about 1.2 KB.
	maxSeriesRecord = 1 << 20
	// maxSeriesNames bounds the step and phase names a series holds, in
	// bytes over the distinct names: a run has tens of steps.
	maxSeriesNames = 1 << 20
	// loadedRowBytes is what a kept row costs besides its values.
	loadedRowBytes = int(unsafe.Sizeof(LoadedRow{}))
)

func readSeries(path string) (Series, error) {
	return readSeriesIn(filepath.Dir(path), filepath.Base(path), SeriesBudget)
}

// readSeriesIn reads the series file rel inside root, streaming its rows
// and keeping at most budget bytes of them (see SeriesBudget).
func readSeriesIn(root, rel string, budget int) (Series, error) {
	f, err := OpenIn(root, rel)
	if err != nil {
		return Series{}, err
	}
	defer f.Close()
	s, err := (&seriesReader{path: f.Name(), budget: budget}).read(f)
	if err != nil {
		return Series{}, err
	}
	return s, nil
}

// seriesReader keeps a series' rows compactly as it reads them: the values
// in chunks of about a MiB (which never need copying to grow), each step
// and phase name once.
type seriesReader struct {
	path   string
	budget int
	// maxRows is how many rows fit the budget; every says which rows are
	// kept (one in every), seen counts the rows read.
	maxRows, every, seen int
	columns              []string
	rows                 []LoadedRow
	chunkRows            int
	chunks               [][]float64
	names                map[string]string
	nameBytes            int
}

// seriesChunk is the size of one chunk of values.
const seriesChunk = 1 << 20

func (sr *seriesReader) read(in io.Reader) (Series, error) {
	r := csv.NewReader(&recordLimit{r: in, path: sr.path, max: maxSeriesRecord})
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	head, err := r.Read()
	if err == io.EOF {
		return Series{}, nil
	}
	if err != nil {
		return Series{}, seriesError(sr.path, err)
	}
	nb := len(seriesBase)
	if len(head) < nb || !slices.Equal(head[:nb], seriesBase) {
		if _, err := r.Read(); err == io.EOF {
			return Series{}, nil // a header torn by a crash as it was written: no rows yet
		}
		return Series{}, damaged(sr.path, fmt.Errorf("the header does not start with %s", strings.Join(seriesBase, ",")))
	}
	fixed := seriesChunk // the last chunk, partly used
	for _, c := range head[nb:] {
		sr.columns = append(sr.columns, Printable(strings.Clone(c)))
		fixed += len(c) + 16
	}
	n := len(sr.columns)
	sr.maxRows = max((sr.budget-fixed)/(loadedRowBytes+8*n), 2)
	sr.chunkRows = max(seriesChunk/(8*max(n, 1)), 1)
	sr.every = 1
	sr.names = map[string]string{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Series{}, seriesError(sr.path, err)
		}
		if err := sr.add(rec, nb); err != nil {
			return Series{}, err
		}
	}
	for i := range sr.rows {
		sr.rows[i].Values = sr.slot(i)
	}
	return Series{Columns: sr.columns, Rows: sr.rows, Every: sr.every}, nil
}

// seriesError is a failed read of the series at path: a refusal as it is,
// anything the CSV reader could not parse as not what dbio writes.
func seriesError(path string, err error) error {
	var parse *csv.ParseError
	switch {
	case errors.Is(err, ErrUntrusted):
		return err
	case errors.As(err, &parse):
		return damaged(path, err)
	}
	return fmt.Errorf("%s: %w", Printable(path), err)
}

// add keeps the row rec when it is one of the rows kept, thinning the kept
// rows first when they fill the budget.
func (sr *seriesReader) add(rec []string, nb int) error {
	if len(rec) < nb {
		return nil // a torn last line from a crash
	}
	el, err := strconv.ParseFloat(rec[1], 64)
	if err != nil || math.IsNaN(el) || math.IsInf(el, 0) {
		return nil // no usable time: torn, or not written by dbio
	}
	sr.seen++
	if (sr.seen-1)%sr.every != 0 {
		return nil
	}
	if len(sr.rows) == sr.maxRows {
		sr.thin()
		if (sr.seen-1)%sr.every != 0 {
			return nil
		}
	}
	step, err := sr.name(rec[2])
	if err != nil {
		return err
	}
	phase, err := sr.name(rec[3])
	if err != nil {
		return err
	}
	t, _ := time.Parse(time.RFC3339, rec[0])
	sr.rows = growTo(sr.rows, len(sr.rows)+1, sr.maxRows)
	sr.rows[len(sr.rows)-1] = LoadedRow{Time: t, ElapsedS: el, Step: step, Phase: phase}
	vals := sr.slot(len(sr.rows) - 1)
	for i := range vals {
		vals[i] = math.NaN()
		if nb+i < len(rec) && rec[nb+i] != "" {
			// dbio writes no infinite value; one here would flatten every chart scaled to it.
			if v, err := strconv.ParseFloat(rec[nb+i], 64); err == nil && !math.IsInf(v, 0) {
				vals[i] = v
			}
		}
	}
	return nil
}

// slot is where the values of kept row i are, its chunk made when new.
func (sr *seriesReader) slot(i int) []float64 {
	n := len(sr.columns)
	c, at := i/sr.chunkRows, (i%sr.chunkRows)*n
	for c >= len(sr.chunks) {
		sr.chunks = append(sr.chunks, make([]float64, sr.chunkRows*n))
	}
	return sr.chunks[c][at : at+n : at+n]
}

// thin keeps every other kept row, and from now on half as many rows; the
// chunks it empties are let go.
func (sr *seriesReader) thin() {
	kept := 0
	for i := 0; i < len(sr.rows); i += 2 {
		sr.rows[kept] = sr.rows[i]
		copy(sr.slot(kept), sr.slot(i))
		kept++
	}
	clear(sr.rows[kept:])
	sr.rows = sr.rows[:kept]
	used := (kept + sr.chunkRows - 1) / sr.chunkRows
	clear(sr.chunks[used:])
	sr.chunks = sr.chunks[:used]
	sr.every *= 2
}

// name is a step or phase name as kept: one copy of each distinct name,
// made printable.
func (sr *seriesReader) name(s string) (string, error) {
	if v, ok := sr.names[s]; ok {
		return v, nil
	}
	sr.nameBytes += len(s)
	if sr.nameBytes > maxSeriesNames {
		return "", untrusted(sr.path, fmt.Sprintf("names more steps and phases than dbio writes (over %d KiB of names)", maxSeriesNames>>10))
	}
	k := strings.Clone(s)
	sr.names[k] = Printable(k)
	return sr.names[k], nil
}

// growTo returns s lengthened to n elements, its capacity doubled when it
// must grow but never beyond limit (the most it will hold).
func growTo[T any](s []T, n, limit int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	c := min(max(2*cap(s), n, 64), max(limit, n))
	grown := make([]T, n, c)
	copy(grown, s)
	return grown
}

// recordLimit fails the read of a CSV file once one record (a line, or
// lines joined by a quoted field) is longer than max bytes: a csv.Reader
// holds a whole record in memory, however long.
type recordLimit struct {
	r      io.Reader
	path   string
	max, n int
	quoted bool
}

func (l *recordLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		switch {
		case c == '"':
			l.quoted = !l.quoted
		case c == '\n' && !l.quoted:
			l.n = 0
			continue
		}
		l.n++
		if l.n > l.max {
			return 0, untrusted(l.path, fmt.Sprintf("has a line longer than %d KiB, longer than any dbio writes", l.max>>10))
		}
	}
	return n, err
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
