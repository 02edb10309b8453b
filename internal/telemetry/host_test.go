package telemetry

import (
	"testing"

	"dbio/internal/results"
)

func TestReadHost(t *testing.T) {
	got, err := ReadHost(snapFS("t0"))
	if err != nil {
		t.Fatal(err)
	}
	want := results.Host{
		Hostname:    "vm",
		Kernel:      "6.18.44-fc-v595",
		OS:          "Debian GNU/Linux 12 (bookworm)",
		CPUModel:    "Intel(R) Xeon(R) Processor @ 2.10GHz",
		CPUs:        2,
		MemoryBytes: 24731712 * 1024,
	}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestReadHostKeepsWhatItCanRead(t *testing.T) {
	fs := FS{Proc: t.TempDir(), Etc: t.TempDir()}
	writeFile(t, fs.proc("sys", "kernel", "osrelease"), "6.1.0-18-amd64\n")
	got, err := ReadHost(fs)
	if got.Kernel != "6.1.0-18-amd64" {
		t.Errorf("kernel %q, want it read despite the other failures", got.Kernel)
	}
	for _, what := range []string{"hostname", "os name", "cpu model", "memory size"} {
		checkErr(t, err, what)
	}
}
