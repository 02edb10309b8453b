// Package livemetrics serves a run's latest per-second figures over HTTP in
// the Prometheus text exposition format, so that a user can watch a run in
// the Prometheus and Grafana they already have. It holds the last row the
// run recorded and nothing else: the results directory stays the record.
package livemetrics

import (
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"dbio/internal/results"
)

// Server serves the last published row at /metrics.
type Server struct {
	mu   sync.Mutex
	last results.SeriesRow
	seen bool
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
}

// Listen binds addr (host:port; port 0 picks a free one) and starts serving.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w (give a free host:port, e.g. 127.0.0.1:9464)", addr, err)
	}
	s := &Server{ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", s.serve)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// URL is where the figures are served.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/metrics" }

// Publish makes row the figures served.
func (s *Server) Publish(row results.SeriesRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last, s.seen = row, true
}

// Close stops serving.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}

func (s *Server) serve(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	row, seen := s.last, s.seen
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(Exposition(row, seen)))
}

// Exposition writes a row as Prometheus text: one gauge per value, named
// dbio_<value name>, labelled with the step and its phase, and the time
// the row was sampled; before the first row, only dbio_up.
func Exposition(row results.SeriesRow, seen bool) string {
	var b strings.Builder
	b.WriteString("# HELP dbio_up 1 while a dbio run serves its live figures.\n# TYPE dbio_up gauge\ndbio_up 1\n")
	if !seen {
		return b.String()
	}
	labels := fmt.Sprintf(`{step=%q,phase=%q}`, row.Step, row.Phase)
	b.WriteString("# HELP dbio_sample_time_seconds When the figures below were sampled (Unix time).\n# TYPE dbio_sample_time_seconds gauge\n")
	fmt.Fprintf(&b, "dbio_sample_time_seconds%s %s\n", labels, strconv.FormatFloat(float64(row.Time.UnixMilli())/1000, 'f', -1, 64))
	values := append([]results.Sample(nil), row.Values...)
	sort.Slice(values, func(i, j int) bool { return values[i].Name < values[j].Name })
	for _, v := range values {
		name := "dbio_" + metricName(v.Name)
		fmt.Fprintf(&b, "# TYPE %s gauge\n%s%s %s\n", name, name, labels, strconv.FormatFloat(v.Value, 'g', -1, 64))
	}
	return b.String()
}

// metricName keeps what Prometheus allows in a name: letters, digits, '_'.
func metricName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
