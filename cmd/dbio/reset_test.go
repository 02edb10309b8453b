package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dbio/internal/results"
)

// TestRepeatWithDataReset: the first repeat of --data reset loads and
// keeps a pristine copy, the second restores it instead of loading, and
// each passes TPC-C's consistency checks; run.json says which was which.
func TestRepeatWithDataReset(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real steps")
	}
	t.Parallel()
	res, data := t.TempDir(), t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"tpcc", "-e", "sqlite", "--target", data, "--results", res, "--name", "rs",
		"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "1s", "--repeat", "2", "--data", "reset"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	sets, _ := filepath.Glob(filepath.Join(res, "*-rs", results.RepeatSetFile))
	if len(sets) != 1 {
		t.Fatalf("repeat sets %v", sets)
	}
	_, runs, err := results.LoadRepeatSet(filepath.Dir(sets[0]))
	if err != nil || len(runs) != 2 {
		t.Fatalf("repeat set: %d runs, %v", len(runs), err)
	}
	first, second := runs[0].Run.Load, runs[1].Run.Load
	if first == nil || first.Data == nil || first.Data.State != results.DataLoaded || first.Data.Copy == nil || first.Reused {
		t.Fatalf("repeat 1's load: %+v, want a load that kept a pristine copy", first)
	}
	if second == nil || second.Data == nil || second.Data.State != results.DataReset || second.Data.Copy == nil ||
		!second.Data.Copy.Made.Equal(first.Data.Copy.Made) || second.Data.ResetBytes != first.Data.Copy.Bytes {
		t.Fatalf("repeat 2's load: %+v, want a reset from repeat 1's copy %+v", second, first.Data)
	}
	if second.Dataset == nil || first.Dataset == nil || second.Dataset.Seed != first.Dataset.Seed || len(second.Dataset.Settings) == 0 ||
		second.Dataset.Settings[0] != first.Dataset.Settings[0] {
		t.Errorf("datasets: repeat 1 %+v, repeat 2 %+v; want the copy's, the same", first.Dataset, second.Dataset)
	}
	for i, r := range runs {
		if len(r.Run.Checks) == 0 {
			t.Errorf("repeat %d ran no consistency checks", i+1)
		}
		for _, c := range r.Run.Checks {
			if !c.Passed {
				t.Errorf("repeat %d: %s failed: %s", i+1, c.Name, c.Detail)
			}
		}
	}
	// Each repeat's run.json says how long each part took: the first
	// loaded and kept the copy, the second restored it; both started the
	// engine, measured, checked and stopped it.
	for i, want := range [][]results.PhaseName{
		{results.PhaseServerStart, results.PhaseLoad, results.PhasePristineCopy, results.PhaseMeasurements, results.PhaseChecks, results.PhaseServerStop},
		{results.PhaseServerStart, results.PhaseReset, results.PhaseMeasurements, results.PhaseChecks, results.PhaseServerStop},
	} {
		for _, name := range want {
			if s, ok := runs[i].Run.PhaseSeconds(name); !ok || s <= 0 {
				t.Errorf("repeat %d: phase %s took %v s (recorded %v) in %+v", i+1, name, s, ok, runs[i].Run.Phases)
			}
		}
	}
	// The restored run says its engine began without the data in its
	// cache; the loaded one does not.
	cold := "data reset: the engine began its steps without the database in its own cache"
	if !slices.ContainsFunc(runs[1].Run.Notes, func(n string) bool { return strings.HasPrefix(n, cold) }) || !strings.Contains(out.String(), cold) {
		t.Errorf("repeat 2's notes %q (or the terminal) lack %q", runs[1].Run.Notes, cold)
	}
	if slices.ContainsFunc(runs[0].Run.Notes, func(n string) bool { return strings.HasPrefix(n, cold) }) {
		t.Errorf("repeat 1 loaded its data, yet its notes %q say it was reset", runs[0].Run.Notes)
	}
	if _, ok := runs[1].Run.PhaseSeconds(results.PhasePristineCopy); ok {
		t.Errorf("repeat 2 restored the copy and kept none, yet records %+v", runs[1].Run.Phases)
	}
	for _, want := range []string{"kept a pristine copy of the loaded database for --data reset", "resetting the database to its pristine copy"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The copy is dbio's, in its directory on the target, and dbio clean removes it.
	copies, _ := filepath.Glob(filepath.Join(data, "dbio", "pristine-sqlite-*", "copy", "*.db"))
	if len(copies) != 1 {
		t.Fatalf("pristine copies on the target: %v", copies)
	}
	// The copy is the loaded state: TPC-C's 3,000 orders in each of the
	// warehouse's 10 districts, each district's next order after them.
	db, err := sql.Open("sqlite3", "file:"+copies[0]+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var orders, next int64
	if err := db.QueryRow("SELECT (SELECT count(*) FROM orders), (SELECT sum(d_next_o_id - 1) FROM district)").Scan(&orders, &next); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if orders != 30000 || next != orders {
		t.Errorf("the pristine copy holds %d orders and districts whose next orders follow %d; want the 30000 loaded", orders, next)
	}
	// A copy gone since (removed, or with an instance created again) is
	// loaded again and kept anew, not a failed run.
	if err := os.Remove(copies[0]); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	code = run(context.Background(), testApp(&out), []string{"tpcc", "-e", "sqlite", "--target", data, "--results", res, "--name", "gone",
		"--warehouses", "1", "--users", "1", "--ramp-time", "0s", "--runtime", "1s", "--data", "reset"})
	if code != exitOK || !strings.Contains(out.String(), "loading again and keeping a new copy") {
		t.Fatalf("a run whose copy is gone: exit %d:\n%s", code, out.String())
	}
	gone, _ := filepath.Glob(filepath.Join(res, "*-gone"))
	if len(gone) != 1 {
		t.Fatalf("runs %v", gone)
	}
	l, err := results.Load(gone[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := l.Run.Load.Data; d == nil || d.State != results.DataLoaded || d.Copy == nil || !d.Copy.Made.After(first.Data.Copy.Made) {
		t.Errorf("the run whose copy was gone: data %+v, want loaded with a new copy", d)
	}
	if _, err := os.Stat(copies[0]); err != nil {
		t.Errorf("no new copy: %v", err)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"clean", "--target", data, "--yes"}); code != exitOK {
		t.Fatalf("clean: exit %d:\n%s", code, out.String())
	}
	if _, err := os.Stat(copies[0]); !os.IsNotExist(err) {
		t.Errorf("the pristine copy outlived dbio clean: %v", err)
	}
}

// --data reset on a server of the user's is refused before anything is
// written: dbio copies nothing on it.
func TestDataResetRefusedWithDSN(t *testing.T) {
	t.Parallel()
	res := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"tpcc", "--dsn", "postgres://bench@127.0.0.1:1/postgres", "--results", res, "--data", "reset", "--dry-run"})
	if code != exitUsage || !strings.Contains(out.String(), "--data reset: dbio restores a pristine copy only of a database whose files it keeps itself") {
		t.Errorf("exit %d, want %d and the refusal:\n%s", code, exitUsage, out.String())
	}
	if entries, _ := os.ReadDir(res); len(entries) != 0 {
		t.Errorf("the refused run wrote %d entries in its results directory", len(entries))
	}
}

// The dry run of --data reset counts the copy's space, and one load and a
// restore for every later repeat in the time.
func TestDataResetDryRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"tpcc", "-e", "sqlite", "--target", t.TempDir(), "--results", t.TempDir(),
		"--warehouses", "1", "--repeat", "3", "--data", "reset", "--dry-run"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{"more for the pristine copy --data reset keeps there", "load           2s     1 warehouse", "none when a pristine copy of this data is there already",
		"resets         2s     2 restore(s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out.String())
		}
	}
}
