package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/metrics"
	"dbio/internal/results"
)

// testdata/quick-postgres-limited is a real run: dbio quick --engine
// postgres --limit san-raid5 --users 1,4 --ramp-time 2s --runtime 8s
// --disk-runtime 2s on ext4 on a virtio disk (the fio pass, its log-write
// points included, measures the device as it is; the database runs under
// the cap), trimmed like the other recordings.

// TestLogWriteReportGolden: the report of a run with log-write points and
// a database that timed its log syncs joins them in the summary, each
// figure named by its statistic, and lays out both tables.
func TestLogWriteReportGolden(t *testing.T) {
	dir := t.TempDir()
	out := Output{HTML: filepath.Join(dir, "report.html"), Markdown: filepath.Join(dir, "summary.md"), CSVDir: filepath.Join(dir, "csv")}
	if err := WriteReport(out, load(t, "quick-postgres-limited"), testOptions()); err != nil {
		t.Fatal(err)
	}
	got := rendered(t, out)
	checkGolden(t, "quick-postgres-limited", got)
	md := string(got["summary.md"])
	summary, _, _ := strings.Cut(md, "## Storage characterization")
	for _, want := range []string{
		"- TPC-C at 4 users: the database waited 16.1 ms per log sync (mean; its per-second means reach 33.4 ms at p99); " +
			"the device's 8k log-write point gives 11.2 ms at p99 (0.692 ms at p50): the rest is queueing, 14.8 ms of the mean wait beyond the point's own mean of 1.33 ms.",
		"- A commit's log write costs the device 0.692 ms at p50 and 11.2 ms at p99 with 8k blocks, 0.528 ms and 10.2 ms with 16k",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	// The database's figures are means: never called a p99 of syncs.
	if strings.Contains(md, "ms p99 per log sync") || strings.Contains(md, "p99 per sync") {
		t.Errorf("a mean called a p99:\n%s", md)
	}
	for _, id := range []string{`id="fio-log-write-points"`, `id="fio-log-sync-tpcc"`} {
		if !strings.Contains(string(got["report.html"]), id) {
			t.Errorf("report.html has no table %s", id)
		}
	}
	// The envelope's table and charts leave the log-write points out.
	corners, _ := os.ReadFile(filepath.Join(out.CSVDir, "fio-four-corners.csv"))
	if len(corners) == 0 || strings.Contains(string(corners), "O_DSYNC") || strings.Count(string(corners), "\n") != 7 {
		t.Errorf("four-corners table:\n%s", corners)
	}
}

// TestLogSyncSentence names each figure by its statistic, and says so when
// the syncs cost no more than the device's own log writes.
func TestLogSyncSentence(t *testing.T) {
	ref := analysis.LogWritePoint{Name: "8k-log-write", BS: 8 << 10, P50US: 120, P99US: 400, MeanUS: 150}
	for _, tc := range []struct {
		name string
		step analysis.LogSyncStep
		want string
	}{
		{"queueing", analysis.LogSyncStep{Users: 4, MeanMS: 1.9, PerSecondP99MS: 2.4, BeyondDeviceMS: 1.75},
			"TPC-C at 4 users: the database waited 1.90 ms per log sync (mean; its per-second means reach 2.40 ms at p99); " +
				"the device's 8k log-write point gives 0.400 ms at p99 (0.120 ms at p50): the rest is queueing, 1.75 ms of the mean wait beyond the point's own mean of 0.150 ms."},
		{"no more than the device", analysis.LogSyncStep{Users: 1, MeanMS: 0.3, PerSecondP99MS: 0.35, BeyondDeviceMS: 0.15, WithinDevice: true},
			"TPC-C at 1 user: the database waited 0.300 ms per log sync (mean; its per-second means reach 0.350 ms at p99); " +
				"the device's 8k log-write point gives 0.400 ms at p99 (0.120 ms at p50): the syncs waited no longer than the device's own log writes take, so there is no queueing to speak of."},
		{"no second's mean", analysis.LogSyncStep{Users: 2, MeanMS: 0.9, PerSecondP99MS: math.NaN(), BeyondDeviceMS: 0.75},
			"TPC-C at 2 users: the database waited 0.900 ms per log sync (mean); " +
				"the device's 8k log-write point gives 0.400 ms at p99 (0.120 ms at p50): the rest is queueing, 0.750 ms of the mean wait beyond the point's own mean of 0.150 ms."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := analysis.LogWrite{Points: []analysis.LogWritePoint{ref}, Steps: []analysis.LogSyncStep{tc.step}}
			j.Reference = &j.Points[0]
			if got := logSyncSentence(j, "TPC-C"); got != tc.want {
				t.Errorf("\ngot  %s\nwant %s", got, tc.want)
			}
		})
	}
	if got := logSyncSentence(analysis.LogWrite{}, "TPC-C"); got != "" {
		t.Errorf("a sentence without steps: %q", got)
	}
}

// TestLogWriteSectionNotes: a run whose database timed no log syncs, or
// kept its log on storage the fio pass did not measure, shows the points
// alone and says why; a run without log-write points has no such section.
func TestLogWriteSectionNotes(t *testing.T) {
	point := results.Step{Name: "8k-log-write", Kind: results.KindFio, Status: results.StatusCompleted,
		Fio: &results.FioPoint{FioPlan: results.FioPlan{Name: "8k-log-write", Series: results.FioSeriesLogWrite, RW: "write", BS: 8 << 10,
			IODepth: 1, Jobs: 1, WriteThrough: true, Label: "data", Targets: []string{"/srv/data"}}},
		Figures: []results.Figure{{Name: results.FigureIOPS, Value: 2000}, {Name: results.FigureLatP50US, Value: 300},
			{Name: results.FigureLatP99US, Value: 900}, {Name: results.FigureLatMeanUS, Value: 400}}}
	syncs := &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{"db_sync_await_ms": {Mean: 2, P99: 3, Samples: 10}}}
	users := func(tel *results.TelemetrySummary) results.Step {
		return results.Step{Name: "users-1", Kind: "tpcc", Users: 1, Status: results.StatusCompleted, Total: &metrics.TxSummary{}, Telemetry: tel}
	}
	data := results.TargetInfo{Role: "data", Path: "/srv/data", Storage: results.Storage{DevNumber: "259:1"}}
	wal := results.TargetInfo{Role: "log", Path: "/srv/wal", Storage: results.Storage{DevNumber: "259:2"}}
	for _, tc := range []struct {
		name    string
		steps   []results.Step
		targets []results.TargetInfo
		want    string
	}{
		{"SQLite times no log syncs", []results.Step{point, users(&results.TelemetrySummary{})}, []results.TargetInfo{data}, "The database timed no log syncs in this run"},
		{"the log on other storage", []results.Step{point, users(syncs)}, []results.TargetInfo{data, wal}, "The database's log was on /srv/wal, storage the fio pass did not measure"},
		{"joined", []results.Step{point, users(syncs)}, []results.TargetInfo{data}, "the rest is queueing, 1.60 ms of the mean wait"},
		{"no log-write point", []results.Step{users(syncs)}, []results.TargetInfo{data}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunView(&results.Loaded{Run: results.Run{Kind: "quick", Environment: results.Environment{Targets: tc.targets}}, Steps: tc.steps})
			r.opts = testOptions()
			sec, findings := logWriteSection(r, func(s string) string { return "fio-" + s })
			if tc.want == "" {
				if sec != nil || len(findings) > 0 {
					t.Errorf("a section %+v and findings %q without a log-write point", sec, findings)
				}
				return
			}
			var text []string
			for _, b := range sec.Blocks {
				if p, ok := b.(*paragraph); ok {
					text = append(text, p.Text)
				}
			}
			if all := strings.Join(text, "\n"); !strings.Contains(all, tc.want) {
				t.Errorf("the section says:\n%s\nwant %q", all, tc.want)
			}
		})
	}
}

// TestLogWritePointFindings: a line per target, and a drive group's
// writers said to be counted together.
func TestLogWritePointFindings(t *testing.T) {
	point := func(name, label string, bs int64, writers int, p50, p99 float64) analysis.LogWritePoint {
		return analysis.LogWritePoint{Name: name, Label: label, BS: bs, P50US: p50, P99US: p99, Writers: writers}
	}
	for _, tc := range []struct {
		name   string
		points []analysis.LogWritePoint
		multi  bool
		want   []string
	}{
		{"one target", []analysis.LogWritePoint{point("8k-log-write", "data", 8<<10, 1, 232, 7830), point("16k-log-write", "data", 16<<10, 1, 268, 4950)}, false,
			[]string{"A commit's log write costs the device 0.232 ms at p50 and 7.83 ms at p99 with 8k blocks, 0.268 ms and 4.95 ms with 16k (sequential, one at a time, O_DSYNC)."}},
		{"two targets", []analysis.LogWritePoint{point("disk-8k-log-write", "disk", 8<<10, 1, 232, 7830), point("shm-8k-log-write", "shm", 8<<10, 1, 9, 109)}, true,
			[]string{"A commit's log write costs the device on disk 0.232 ms at p50 and 7.83 ms at p99 with 8k blocks (sequential, one at a time, O_DSYNC).",
				"A commit's log write costs the device on shm 0.009 ms at p50 and 0.109 ms at p99 with 8k blocks (sequential, one at a time, O_DSYNC)."}},
		{"a drive group", []analysis.LogWritePoint{point("8k-log-write", "group", 8<<10, 2, 9, 618)}, false,
			[]string{"A commit's log write costs the devices 0.009 ms at p50 and 0.618 ms at p99 with 8k blocks (sequential, one at a time, O_DSYNC, a writer on each of 2 targets at once, their writes counted together)."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := logWritePointFindings(analysis.LogWrite{Points: tc.points}, tc.multi)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("\ngot  %q\nwant %q", got, tc.want)
			}
		})
	}
}
