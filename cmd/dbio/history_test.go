package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunsAreRemembered runs a short TPC-C on SQLite with --history in a
// temporary directory and a label: the history lists it, its NOPM trend
// has its step, and importing its results directory again changes nothing.
func TestRunsAreRemembered(t *testing.T) {
	t.Parallel()
	dir, res := t.TempDir(), t.TempDir()
	store := filepath.Join(t.TempDir(), "history.db")
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"tpcc", "--target", dir, "--results", res, "--warehouses", "1",
		"--users", "1", "--ramp-time", "0s", "--runtime", "2s", "--history", store, "--label", "nightly"})
	if code != exitOK {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
	trend := func() []trendRow {
		t.Helper()
		var out bytes.Buffer
		if code := run(context.Background(), testApp(&out), []string{"history", "--history", store, "--figure", "nopm", "--label", "nightly", "--format", "json"}); code != exitOK {
			t.Fatalf("history: exit code %d:\n%s", code, out.String())
		}
		var rows []trendRow
		if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
			t.Fatalf("%v:\n%s", err, out.String())
		}
		return rows
	}
	rows := trend()
	if len(rows) != 1 || rows[0].Step != "users-1" || rows[0].Value <= 0 || rows[0].Unit != "new-orders/min" || len(rows[0].Labels) != 1 {
		t.Fatalf("trend %+v", rows)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"history", "import", "--history", store, res}); code != exitOK || !strings.Contains(out.String(), "1 run(s) remembered") {
		t.Fatalf("import: exit code %d:\n%s", code, out.String())
	}
	if again := trend(); len(again) != 1 || again[0].Value != rows[0].Value || again[0].Run != rows[0].Run {
		t.Errorf("after the import the trend is %+v, was %+v", again, rows)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"history", "--history", store, "--engine", "sqlite"}); code != exitOK || !strings.Contains(out.String(), "nightly") {
		t.Errorf("history list: exit code %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"history", "--history", store, "--figure", "nopmm"}); code != exitUsage {
		t.Errorf("an unknown figure: exit code %d:\n%s", code, out.String())
	}
	// The trend page (rendered and checked in Chromium by the report's tests).
	page := filepath.Join(t.TempDir(), "trend.html")
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"history", "--history", store, "--figure", "nopm", "--figure", "tpm", "--format", "html", "-o", page}); code != exitOK {
		t.Fatalf("trend page: exit code %d:\n%s", code, out.String())
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), `data-chart="trend-nopm-users-1"`) || !strings.Contains(string(b), `data-chart="trend-tpm-users-1"`) {
		t.Errorf("the trend page lacks a chart per figure (%v)", err)
	}
	for _, bad := range [][]string{{"--figure", "nopm", "--format", "html"}, {"--format", "html", "-o", page}, {"--figure", "nopm", "--format", "html", "-o", page + ".csv"}, {"--figure", "nopm", "-o", page}} {
		out.Reset()
		if code := run(context.Background(), testApp(&out), append([]string{"history", "--history", store}, bad...)); code != exitUsage {
			t.Errorf("%v: exit code %d, want %d:\n%s", bad, code, exitUsage, out.String())
		}
	}
}

// TestCheckFindsARegressionBeyondNoise checks recorded repeat sets against
// each other: five slow repeats against five fast ones are a regression
// (exit 1, naming the figure), the other way round none (exit 0).
func TestCheckFindsARegressionBeyondNoise(t *testing.T) {
	t.Parallel()
	fast, slow := filepath.Join("..", "..", "internal", "report", "testdata", "repeats-fast"), filepath.Join("..", "..", "internal", "report", "testdata", "repeats-slow")
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"check", slow, "--against", fast}); code != exitFailure ||
		!strings.Contains(out.String(), "REGRESSION sysbench 1, TPS: ") || !strings.Contains(out.String(), "5 against 5 repeats") {
		t.Errorf("slow against fast: exit code %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"check", fast, "--against", slow}); code != exitOK || !strings.Contains(out.String(), "no regression beyond the noise") {
		t.Errorf("fast against slow: exit code %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"check", fast}); code != exitUsage {
		t.Errorf("no --against: exit code %d:\n%s", code, out.String())
	}
}
