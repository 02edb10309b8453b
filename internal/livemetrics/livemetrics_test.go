package livemetrics

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"dbio/internal/results"
)

func TestExposition(t *testing.T) {
	if got := Exposition(results.SeriesRow{}, false); !strings.HasSuffix(got, "dbio_up 1\n") || strings.Contains(got, "dbio_tpm") {
		t.Errorf("before the first row:\n%s", got)
	}
	row := results.SeriesRow{Time: time.Unix(1795617013, 500e6), Step: "users-2", Phase: "measure",
		Values: []results.Sample{{Name: "tpm", Value: 27535}, {Name: "disk_vda-1_wps", Value: 5325.5}}}
	got := Exposition(row, true)
	for _, want := range []string{
		`dbio_sample_time_seconds{step="users-2",phase="measure"} 1795617013.5`,
		"# TYPE dbio_tpm gauge\ndbio_tpm{step=\"users-2\",phase=\"measure\"} 27535\n",
		`dbio_disk_vda_1_wps{step="users-2",phase="measure"} 5325.5`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("exposition lacks %q:\n%s", want, got)
		}
	}
	// Names sorted: the disk's figure before tpm.
	if strings.Index(got, "dbio_disk") > strings.Index(got, "dbio_tpm") {
		t.Errorf("figures not sorted by name:\n%s", got)
	}
}

// The server serves what was last published, over real HTTP.
func TestServerServesTheLastRow(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Publish(results.SeriesRow{Step: "users-1", Phase: "rampup", Values: []results.Sample{{Name: "tpm", Value: 1}}})
	s.Publish(results.SeriesRow{Step: "users-1", Phase: "measure", Values: []results.Sample{{Name: "tpm", Value: 2}}})
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") || !strings.Contains(string(b), `dbio_tpm{step="users-1",phase="measure"} 2`) {
		t.Errorf("%s\n%s", resp.Header.Get("Content-Type"), b)
	}
	if _, err := Listen(strings.TrimPrefix(strings.TrimSuffix(s.URL(), "/metrics"), "http://")); err == nil || !strings.Contains(err.Error(), "give a free host:port") {
		t.Errorf("a busy address: %v", err)
	}
}
