package fio

import (
	"testing"
	"time"

	"dbio/internal/telemetry"
)

// A host's node exporter samples are stamped with this machine's clock,
// as the fleet's window is once the hosts' seconds are put on it: the
// samples within the window are those whose stamps are in it, whatever
// the host's clock offset.
func TestHostTelemetryWindow(t *testing.T) {
	exp, err := telemetry.NewExporter(telemetry.ExporterOptions{URL: "http://192.0.2.1:9100/metrics"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	hs := &hostSamples{exp: exp}
	for i := range 10 {
		// Second i's CPU share is i: which seconds were kept shows in the mean.
		hs.at = append(hs.at, t0.Add(time.Duration(i)*time.Second+100*time.Millisecond))
		hs.pts = append(hs.pts, []telemetry.Point{{Name: "cpu_user_pct", Value: float64(i)}})
	}
	w := &pointWatch{hosts: map[string]*hostSamples{"h1": hs}}
	from, to := t0.Add(6*time.Second), t0.Add(8*time.Second)
	sum, sys := w.hostTelemetry("h1", from, to, t0)
	if sum == nil || sys == nil {
		t.Fatal("no telemetry")
	}
	if sum.Samples != 3 || sys.CPUUserPct != 7 {
		t.Errorf("%d samples of mean CPU user %.1f%%, want the 3 seconds 6..8 (mean 7%%)", sum.Samples, sys.CPUUserPct)
	}
}
