package fio

import (
	"strings"
	"testing"

	"dbio/internal/results"
)

// mustJobFile is the job file of a point whose values are all printable.
func mustJobFile(t *testing.T, p results.FioPlan, profile string, places []placement) string {
	t.Helper()
	job, err := JobFile(p, profile, places)
	if err != nil {
		t.Fatal(err)
	}
	return job
}

// TestJobFileRefusesControlCharacters: fio reads a job file line by line
// and has no escape for a line break, so a target path holding one would
// write options of its own into the job (a filename of its choosing); the
// writer refuses it, whatever the preflight let through.
func TestJobFileRefusesControlCharacters(t *testing.T) {
	point := results.FioPlan{Name: "4k-randread", RW: "randread", BS: 4096, IODepth: 1, Jobs: 1, RuntimeS: 1}
	for _, file := range []string{"/t/A\nfilename=/dev/sda\n#/dbio/fio/work.dat", "/t/A\rB/dbio/fio/work.dat", "/t/\x1b[2J/dbio/fio/work.dat"} {
		job, err := JobFile(point, "test", []placement{{Label: "t", File: file, Engine: "psync"}})
		if err == nil || !strings.Contains(err.Error(), "fio job file not written") {
			t.Errorf("file %q: error %v; job file:\n%s", file, err, job)
		}
	}
	if _, err := JobFile(results.FioPlan{Name: "x\ny", RW: "read", BS: 4096, IODepth: 1, Jobs: 1}, "test", nil); err == nil {
		t.Error("a point name with a line break was written")
	}
}
