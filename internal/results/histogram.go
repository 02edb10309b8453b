package results

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// writeHistogram stores h in the HdrHistogram interval-log format (.hdr), the
// format HdrHistogram's own tools read, so latency can be re-merged and
// re-plotted outside dbio. Values are microseconds.
func writeHistogram(path, tag string, h *hdrhistogram.Histogram, start, end time.Time) error {
	var buf bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&buf)
	if err := w.OutputLogFormatVersion(); err != nil {
		return err
	}
	if err := w.OutputComment("dbio latency histogram, values in microseconds, type " + tag); err != nil {
		return err
	}
	startMs := start.UnixMilli()
	if err := w.OutputStartTime(startMs); err != nil {
		return err
	}
	if err := w.OutputLegend(); err != nil {
		return err
	}
	c := h.Clone()
	c.SetTag(tag)
	c.SetStartTimeMs(startMs)
	c.SetEndTimeMs(end.UnixMilli())
	if err := w.OutputIntervalHistogram(c); err != nil {
		return fmt.Errorf("encode histogram %s: %w", tag, err)
	}
	return WriteFileAtomic(path, buf.Bytes())
}

// maxHistogramBytes bounds a .hdr file: dbio writes one interval per
// transaction type and step, a few KiB each.
const maxHistogramBytes = 64 << 20

// ReadHistogram merges every interval histogram of a .hdr file, opened as
// OpenIn opens a file and read up to maxHistogramBytes.
func ReadHistogram(path string) (*hdrhistogram.Histogram, error) {
	b, err := readFileIn(filepath.Dir(path), filepath.Base(path), maxHistogramBytes)
	if err != nil {
		return nil, err
	}
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(b))
	var merged *hdrhistogram.Histogram
	for {
		h, err := r.NextIntervalHistogram()
		if errors.Is(err, io.EOF) || (err == nil && h == nil) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read histogram %s: %w", path, err)
		}
		if merged == nil {
			merged = h
			continue
		}
		merged.Merge(h)
	}
	if merged == nil {
		return nil, fmt.Errorf("read histogram %s: no histogram in file", path)
	}
	return merged, nil
}

// CorrectedSuffix ends the name of an open-loop step's histogram of a
// transaction type's latency from each transaction's intended start
// (latency-new_order-corrected.hdr), beside the type's service time's.
const CorrectedSuffix = "-corrected"

// histogramFile is the name of a step's histogram of the given type.
func histogramFile(name string) string {
	return "latency-" + unsafeName.ReplaceAllString(name, "-") + ".hdr"
}

// StepHistograms reads every latency histogram of a step directory dbio
// wrote (latency-<type>.hdr), by type as its file names it; a step
// without any has none. The directory and its files are opened as ReadDirIn
// and OpenIn open them.
func StepHistograms(stepDir string) (map[string]*hdrhistogram.Histogram, error) {
	entries, err := ReadDirIn(stepDir, ".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "latency-") && strings.HasSuffix(n, ".hdr") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := map[string]*hdrhistogram.Histogram{}
	for _, n := range names {
		h, err := ReadHistogram(filepath.Join(stepDir, n))
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(strings.TrimPrefix(n, "latency-"), ".hdr")] = h
	}
	return out, nil
}
