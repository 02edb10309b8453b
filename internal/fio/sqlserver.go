package fio

import (
	"errors"
	"time"

	"dbio/internal/results"
)

// sqlServer is SQL Server's documented I/O patterns as fio points, for the
// DBAs whose Windows SQL Server cannot be captured here: 8 KB page reads
// and writes, 64 KB extent reads, 512 KB read-ahead, and log writes of the
// smallest and largest log block, each written through. docs/disk.md
// says where each pattern is documented.
type sqlServer struct{}

// sqlServerQD is the data points' default queue: SQL Server issues its
// page I/O asynchronously from many sessions; its documentation gives no
// figure, so a modest queue stands in (--iodepth changes it).
const sqlServerQD = 8

// sqlServerLogBlocks are the smallest and largest log block SQL Server
// writes: a multiple of 512 bytes, up to 60 KB.
var sqlServerLogBlocks = []int64{512, 60 * kib}

func (sqlServer) Name() string { return "sqlserver" }

func (sqlServer) Describe() string {
	return "SQL Server's documented I/O patterns, for a SQL Server that cannot be captured here: 8k random page reads " +
		"and writes (written through, as SQL Server opens its files), 64k random extent reads, 512k sequential " +
		"read-ahead, each with 8 I/Os in flight, then log writes of the smallest and largest log block (512 bytes " +
		"and 60k), sequential, one at a time, written through: read by their p50 and p99 latency. Takes --iodepth " +
		"(one value) and --jobs for the data points; the log writes stay at one job and one I/O in flight."
}

func (sqlServer) DefaultRuntime() time.Duration { return time.Minute }

func (p sqlServer) Points(c Config) ([]results.FioPlan, error) {
	if err := errors.Join(unused(c, p.Name(), "bs", "rw", "read-pct", "rates"), single(c.IODepths, "iodepth", p.Name())); err != nil {
		return nil, err
	}
	qd := sqlServerQD
	if len(c.IODepths) == 1 {
		qd = c.IODepths[0]
	}
	jobs := max(c.Jobs, 1)
	data := []struct {
		name, rw     string
		bs           int64
		writeThrough bool
	}{
		{"8k-page-read", "randread", 8 * kib, false},
		{"8k-page-write", "randwrite", 8 * kib, true},
		{"64k-extent-read", "randread", 64 * kib, false},
		{"512k-read-ahead", "read", 512 * kib, false},
	}
	var out []results.FioPlan
	for _, d := range data {
		out = append(out, results.FioPlan{Name: d.name, Series: d.name, RW: d.rw, BS: d.bs, IODepth: qd, Jobs: jobs,
			Split: d.rw == "read" && jobs > 1, WriteThrough: d.writeThrough, RuntimeS: c.runtime(p), RampS: c.ramp()})
	}
	for _, bs := range sqlServerLogBlocks {
		out = append(out, results.FioPlan{Name: bsName(bs) + "-log-write", Series: results.FioSeriesLogWrite, RW: "write", BS: bs,
			IODepth: 1, Jobs: 1, WriteThrough: true, RuntimeS: c.runtime(p), RampS: c.ramp()})
	}
	return out, nil
}

// Summarize gives the log writes' p50 and p99, as four-corners does: the
// price of a commit at the device.
func (sqlServer) Summarize(c Config, points []results.FioPoint) []string {
	return fourCorners{}.Summarize(c, points)
}
