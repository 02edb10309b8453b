package fio

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/fioformat"
	"dbio/internal/results"
	"dbio/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files from the current code")

// captures are the real fio runs fioformat's parser is tested on (its
// testdata/<name>.json): here, the figures a step records from each.
var captures = []string{"randread", "mix", "steady", "group", "terminated", "hist"}

// captured is the path of a capture of fioformat's testdata.
func captured(name string) string {
	return filepath.Join("..", "fioformat", "testdata", name)
}

// goldenView is what the golden files hold for one capture: the parsed
// report, a check that the json+ histogram bins add up, and the figures a
// step would record from it.
type goldenView struct {
	Output  *fioformat.Output   `json:"output"`
	Bins    map[string][2]int64 `json:"bins"`
	Figures []results.Figure    `json:"figures"`
}

func TestParseGolden(t *testing.T) {
	for _, name := range captures {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(captured(name + ".json"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			out, err := fioformat.Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			view := goldenView{Output: out, Bins: map[string][2]int64{}}
			for i, g := range out.Groups {
				for dir, d := range map[string]*results.FioDirection{"read": g.Read, "write": g.Write, "total": g.Total} {
					if d == nil {
						continue
					}
					var n int64
					for _, c := range d.Bins {
						n += c
					}
					view.Bins[fmt.Sprintf("%d/%s", i, dir)] = [2]int64{int64(len(d.Bins)), n}
				}
			}
			g := out.Groups[0]
			pr := results.FioPoint{FioPlan: results.FioPlan{RW: out.GlobalOptions["rw"]}, FioDirections: g.FioDirections,
				UsrCPU: g.UsrCPU, SysCPU: g.SysCPU, ElapsedS: g.ElapsedS, Steady: g.SteadyState}
			view.Figures = figures(pr)
			got, err := json.MarshalIndent(view, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".golden"), append(got, '\n'))
		})
	}
}

// FuzzFigures checks that whatever report fioformat accepts gives a step
// dbio can record: its figures encode as JSON (a NaN would make the step's
// summary.json impossible to write) and its latency bins become
// histograms. The seeds are fioformat's real captures.
func FuzzFigures(f *testing.F) {
	seeds, _ := filepath.Glob(captured("*.json"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := fioformat.Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, g := range out.Groups {
			if g.Total == nil {
				continue
			}
			r := results.FioPoint{FioDirections: g.FioDirections, UsrCPU: g.UsrCPU, SysCPU: g.SysCPU, Steady: g.SteadyState}
			if _, err := json.Marshal(figures(r)); err != nil {
				t.Fatalf("figures do not encode: %v", err)
			}
			histograms(g.FioDirections)
		}
	})
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update if the change is intended):\n%s", path, firstDiff(string(want), string(got)))
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n want %q\n got  %q", i+1, a, b)
		}
	}
	return "(equal lines, different bytes)"
}

func requireFio(t testing.TB) {
	t.Helper()
	testenv.RequireProgram(t, "fio", InstallHint)
}

// shmDir is a fresh directory on tmpfs, removed after the test.
func shmDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "dbio-fio-test-")
	if err != nil {
		t.Fatalf("tmpfs at /dev/shm is needed by this test: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
