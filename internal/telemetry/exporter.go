package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// Exporter samples a host dbio does not run on through its Prometheus node
// exporter (Debian's prometheus-node-exporter): each Sample reads the
// exporter's /metrics page and returns the per-second values since the
// previous one, under the same names and computed by the same code as the
// local sampler's (see the package documentation), from the exporter's
// copies of the same kernel counters:
//
//	node_cpu_seconds_total{cpu,mode}     /proc/stat's CPU times (summed over CPUs)
//	node_load1                           the 1-minute load average
//	node_disk_*_total{device}            /proc/diskstats, for the devices watched
//	node_pressure_*_seconds_total        /proc/pressure's stall totals
//	node_memory_{MemTotal,MemAvailable,Cached}_bytes  /proc/meminfo
//
// The memory levels (mem_used_mb, mem_available_mb, mem_cache_mb) are a
// host's alone: the local sampler records dbio's and the server's memory
// instead. Processes, memory cgroups and engine counters are not sampled
// through an exporter.
type Exporter struct {
	url     string
	client  *http.Client
	devices []device

	mu       sync.Mutex
	prev     snapshot
	hasPrev  bool
	problems problems
}

// ScrapeTimeout bounds one read of an exporter's page: a sample a second
// cannot wait longer without losing the next.
const ScrapeTimeout = 2 * time.Second

// maxPage bounds the page read: a node exporter's is some 100 kB.
const maxPage = 16 << 20

// ExporterOptions configures an Exporter.
type ExporterOptions struct {
	// URL is the exporter's metrics page, e.g. http://10.0.0.11:9100/metrics.
	URL string
	// Devices are the block devices to watch, by kernel name (the device
	// label of node_disk_*: "vda", "nvme0n1", "dm-0").
	Devices []string
	// Client reads the page; nil is a client of its own that times out
	// after ScrapeTimeout and uses no proxy (the exporter is on the fleet's
	// own network).
	Client *http.Client
}

// NewExporter prepares the reading of one host's exporter; it reads
// nothing yet (see Check).
func NewExporter(o ExporterOptions) (*Exporter, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("node exporter %q: give its metrics page as http://ADDRESS:PORT/metrics", o.URL)
	}
	e := &Exporter{url: o.URL, client: o.Client}
	if e.client == nil {
		e.client = &http.Client{Timeout: ScrapeTimeout, Transport: &http.Transport{}}
	}
	seen := map[string]bool{}
	for _, d := range o.Devices {
		name := strings.TrimPrefix(strings.TrimSpace(d), "/dev/")
		if name != "" && !seen[name] {
			seen[name] = true
			e.devices = append(e.devices, device{name: name, key: metricKey(name)})
		}
	}
	return e, nil
}

// OpenExporter prepares the reading of host's exporter and reads it once,
// as the baseline of the first Sample (NewExporter, then Check): the
// warnings, each naming the host, say what it lacks; an error says it
// cannot be read at all.
func OpenExporter(ctx context.Context, host string, o ExporterOptions) (*Exporter, []string, error) {
	e, err := NewExporter(o)
	if err != nil {
		return nil, nil, err
	}
	warnings, err := e.Check(ctx)
	if err != nil {
		return nil, nil, err
	}
	for i, w := range warnings {
		warnings[i] = "host " + host + ": " + w
	}
	return e, warnings, nil
}

// URL is the page the exporter is read at.
func (e *Exporter) URL() string { return e.url }

// Devices are the watched devices as they appear in metric names.
func (e *Exporter) Devices() []string {
	var out []string
	for _, d := range e.devices {
		out = append(out, d.key)
	}
	return out
}

// Check reads the page once, as the baseline of the next Sample: an error
// says the exporter cannot be read at all; the warnings name what it lacks
// (a watched device it lists no counters of, CPU times).
func (e *Exporter) Check(ctx context.Context) (warnings []string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur, disks, err := e.scrape(ctx)
	if err != nil {
		return nil, err
	}
	e.prev, e.hasPrev = cur, true
	if !cur.hasCPU {
		warnings = append(warnings, fmt.Sprintf("node exporter %s serves no node_cpu_seconds_total: no CPU figures (is its cpu collector off?)", e.url))
	}
	var missing []string
	for _, d := range e.devices {
		if _, ok := cur.disks[d.name]; !ok {
			missing = append(missing, d.name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(disks)
		warnings = append(warnings, fmt.Sprintf("node exporter %s has no node_disk_* counters of %s (it lists %s): no disk figures of it",
			e.url, strings.Join(missing, ", "), orNone(disks)))
	}
	return warnings, nil
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// Restart drops the baseline: the next Sample only records one, so that a
// sample never spans a pause between two points.
func (e *Exporter) Restart() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hasPrev = false
}

// Sample reads the page and returns when it was read (this machine's
// clock, the middle of the request) and the per-second values since the
// previous read; nothing on the first read after Restart, or when the read
// fails (which is counted in Warnings).
func (e *Exporter) Sample(ctx context.Context) (time.Time, []Point) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur, _, err := e.scrape(ctx)
	if err != nil {
		e.problems.note("read the node exporter", err)
		return time.Time{}, nil
	}
	var pts []Point
	if e.hasPrev {
		dt := cur.at.Sub(e.prev.at).Seconds()
		if dt <= 0 {
			return cur.at, nil
		}
		pts = rates(e.prev, cur, dt, e.devices)
	}
	e.prev, e.hasPrev = cur, true
	return cur.at, pts
}

// CPUs is the number of CPUs the exporter last listed.
func (e *Exporter) CPUs() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.prev.cpus
}

// Warnings say which reads failed since the last call, and how often; the
// count starts again after it.
func (e *Exporter) Warnings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.problems.warnings()
	e.problems.reset()
	return out
}

// scrape reads the page into a snapshot, and lists the disks it has
// counters of.
func (e *Exporter) scrape(ctx context.Context) (snapshot, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, ScrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
	if err != nil {
		return snapshot{}, nil, err
	}
	began := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		return snapshot{}, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return snapshot{}, nil, fmt.Errorf("%s: %s", e.url, resp.Status)
	}
	// The kernel's counters are read while the page is being written: the
	// middle of the request is the best guess of when.
	done := time.Now()
	at := began.Add(done.Sub(began) / 2)
	page := &countingReader{r: io.LimitReader(resp.Body, maxPage+1)}
	cur, disks, err := nodeSnapshot(page)
	if page.n > maxPage {
		// Cut short, the page would lose whatever came after the limit
		// without a word.
		return snapshot{}, nil, fmt.Errorf("%s: the page is larger than %d MiB, which no node exporter's is: give node_exporter the exporter's own /metrics page", e.url, maxPage>>20)
	}
	if err != nil {
		return snapshot{}, nil, fmt.Errorf("%s: %w", e.url, err)
	}
	cur.at = at
	return cur, disks, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// nodeSnapshot turns a node exporter's page into the sampler's snapshot:
// seconds back into the kernel's USER_HZ ticks and milliseconds, which
// the exporter divided them from.
func nodeSnapshot(r io.Reader) (snapshot, []string, error) {
	samples, err := parsePromText(r, func(name string) bool {
		return name == "node_cpu_seconds_total" || name == "node_load1" ||
			strings.HasPrefix(name, "node_disk_") || strings.HasPrefix(name, "node_pressure_") ||
			name == "node_memory_MemTotal_bytes" || name == "node_memory_MemAvailable_bytes" || name == "node_memory_Cached_bytes"
	})
	if err != nil {
		return snapshot{}, nil, err
	}
	var cur snapshot
	cpus := map[string]bool{}
	disks := map[string]diskStat{}
	psi := map[string]pressure{}
	var mem memInfo
	hasMem := false
	for _, s := range samples {
		v := s.value
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			continue
		}
		switch {
		case s.name == "node_cpu_seconds_total":
			cpus[s.labels["cpu"]] = true
			t := uint64(math.Round(v * userHZ))
			c := &cur.cpu
			switch s.labels["mode"] {
			case "user":
				c.user += t
			case "nice":
				c.nice += t
			case "system":
				c.system += t
			case "idle":
				c.idle += t
			case "iowait":
				c.iowait += t
			case "irq":
				c.irq += t
			case "softirq":
				c.softirq += t
			case "steal":
				c.steal += t
			}
			cur.hasCPU = true
		case s.name == "node_load1":
			cur.load1, cur.hasLoad = v, true
		case strings.HasPrefix(s.name, "node_disk_"):
			dev := s.labels["device"]
			if dev == "" {
				continue
			}
			d := disks[dev]
			d.name = dev
			ms := uint64(math.Round(v * 1000))
			n := uint64(math.Round(v))
			switch s.name {
			case "node_disk_reads_completed_total":
				d.reads = n
			case "node_disk_read_bytes_total":
				d.readBytes = n
			case "node_disk_read_time_seconds_total":
				d.readMs = ms
			case "node_disk_writes_completed_total":
				d.writes = n
			case "node_disk_written_bytes_total":
				d.writeByte = n
			case "node_disk_write_time_seconds_total":
				d.writeMs = ms
			case "node_disk_io_time_seconds_total":
				d.ioMs = ms
			case "node_disk_io_time_weighted_seconds_total":
				d.weighted = ms
			default:
				continue // discards, flushes, merges, in flight
			}
			disks[dev] = d
		case strings.HasPrefix(s.name, "node_pressure_"):
			res, kind, ok := pressureOf(s.name)
			if !ok {
				continue
			}
			p := psi[res]
			us := uint64(math.Round(v * 1e6))
			if kind == "waiting" {
				p.some = us
			} else {
				p.full, p.hasFull = us, true
			}
			psi[res] = p
		case s.name == "node_memory_MemTotal_bytes":
			mem.total, hasMem = uint64(v), true
		case s.name == "node_memory_MemAvailable_bytes":
			mem.available = uint64(v)
		case s.name == "node_memory_Cached_bytes":
			mem.cached = uint64(v)
		}
	}
	if len(samples) == 0 {
		return snapshot{}, nil, errors.New("the page holds none of the node exporter's CPU, disk, pressure or memory metrics: is this a node exporter?")
	}
	cur.cpus = len(cpus)
	if len(disks) > 0 {
		cur.disks = disks
	}
	if len(psi) > 0 {
		cur.psi = psi
	}
	if hasMem {
		cur.mem = &mem
	}
	names := make([]string, 0, len(disks))
	for n := range disks {
		names = append(names, n)
	}
	return cur, names, nil
}

// pressureOf reads node_pressure_<res>_<waiting|stalled>_seconds_total:
// "waiting" is the kernel's "some" total, "stalled" its "full".
func pressureOf(name string) (res, kind string, ok bool) {
	rest, ok := strings.CutPrefix(name, "node_pressure_")
	if !ok {
		return "", "", false
	}
	rest, ok = strings.CutSuffix(rest, "_seconds_total")
	if !ok {
		return "", "", false
	}
	res, kind, ok = strings.Cut(rest, "_")
	if !ok || (kind != "waiting" && kind != "stalled") || (res != "cpu" && res != "io" && res != "memory") {
		return "", "", false
	}
	return res, kind, true
}
