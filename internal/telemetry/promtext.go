package telemetry

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// promSample is one line of the Prometheus text exposition format: a metric
// name, its labels and its value (a timestamp, when given, is dropped: the
// node exporter gives none, and dbio times a scrape itself).
type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

// parsePromText reads the Prometheus text format (version 0.0.4), which the
// node exporter serves on /metrics: '#' lines are comments (HELP and TYPE
// among them), every other non-blank line is
//
//	name{label="value",...} value [timestamp]
//
// with \\, \" and \n escaped in label values. Only the lines whose name keep
// says are wanted are returned, so that the hundreds of series a node
// exporter serves cost a comparison each, not a map.
func parsePromText(r io.Reader, keep func(name string) bool) ([]promSample, error) {
	var out []promSample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		// Over half a node exporter's lines are HELP and TYPE comments:
		// they are passed over before the line is copied into a string.
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 || raw[0] == '#' {
			continue
		}
		text := string(raw)
		end := strings.IndexAny(text, "{ \t")
		if end < 0 {
			return nil, fmt.Errorf("line %d: %q has no value", line, text)
		}
		name := text[:end]
		if !validMetricName(name) {
			return nil, fmt.Errorf("line %d: %q is not a metric name", line, name)
		}
		if !keep(name) {
			continue
		}
		s := promSample{name: name}
		rest := text[end:]
		if rest[0] == '{' {
			labels, after, err := parseLabels(rest[1:])
			if err != nil {
				return nil, fmt.Errorf("line %d (%s): %w", line, name, err)
			}
			s.labels, rest = labels, after
		}
		fields := strings.Fields(rest)
		if len(fields) < 1 || len(fields) > 2 {
			return nil, fmt.Errorf("line %d (%s): want a value and at most a timestamp after the labels, got %q", line, name, strings.TrimSpace(rest))
		}
		v, err := parsePromValue(fields[0])
		if err != nil {
			return nil, fmt.Errorf("line %d (%s): %w", line, name, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out, sc.Err()
}

// validMetricName is the format's [a-zA-Z_:][a-zA-Z0-9_:]*.
func validMetricName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// parseLabels reads the labels after '{' up to the closing '}', and returns
// them with what follows.
func parseLabels(s string) (map[string]string, string, error) {
	labels := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return labels, s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil, "", fmt.Errorf("label without '=' in %q", s)
		}
		name := strings.TrimSpace(s[:eq])
		if !validMetricName(name) || strings.Contains(name, ":") {
			return nil, "", fmt.Errorf("%q is not a label name", name)
		}
		s = strings.TrimLeft(s[eq+1:], " \t")
		if !strings.HasPrefix(s, `"`) {
			return nil, "", fmt.Errorf("label %s: value not quoted", name)
		}
		var b strings.Builder
		i := 1
		closed := false
		for ; i < len(s); i++ {
			c := s[i]
			if c == '"' {
				closed = true
				break
			}
			if c != '\\' {
				b.WriteByte(c)
				continue
			}
			if i+1 >= len(s) {
				break
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				// The format escapes nothing else; keep what was written.
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		}
		if !closed {
			return nil, "", fmt.Errorf("label %s: value not closed", name)
		}
		labels[name] = b.String()
		s = strings.TrimLeft(s[i+1:], " \t")
		switch {
		case strings.HasPrefix(s, ","):
			s = s[1:]
		case strings.HasPrefix(s, "}"):
		default:
			return nil, "", fmt.Errorf("label %s: want ',' or '}' after its value", name)
		}
	}
}

// parsePromValue reads a sample value: a Go float, or NaN, +Inf, -Inf as
// the format writes them.
func parsePromValue(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q is not a number", s)
	}
	return v, nil
}
