package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/capture"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// TestCaptureAndReplayRefuseBadInput: each refusal is one line naming the
// problem, exit code 2, and nothing written, neither results nor dbio's
// directory on the target.
func TestCaptureAndReplayRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	// A capture of a gigabyte's span, more than the small target holds.
	capDir := filepath.Join(dir, "cap")
	if err := os.Mkdir(capDir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := blocktrace.Trace{
		Devices: []blocktrace.Device{{Name: "sdb", Major: 8, Minor: 16}}, Processes: []string{"db"}, Duration: time.Second,
		Requests: []blocktrace.Request{
			{Op: blocktrace.Read, Size: 8192, Latency: time.Millisecond, Depth: 1},
			{At: time.Millisecond, Op: blocktrace.Write, Offset: 1 << 30, Size: 8192, Latency: time.Millisecond, Depth: 1},
		},
	}
	if err := capture.WriteDir(capDir, capture.Record{Kind: capture.Kind, Version: 1}, tr); err != nil {
		t.Fatal(err)
	}
	// A capture of one request, and a target another run holds.
	oneDir := filepath.Join(dir, "one")
	if err := os.Mkdir(oneDir, 0o755); err != nil {
		t.Fatal(err)
	}
	one := tr
	one.Requests = tr.Requests[:1]
	if err := capture.WriteDir(oneDir, capture.Record{Kind: capture.Kind, Version: 1}, one); err != nil {
		t.Fatal(err)
	}
	held := t.TempDir()
	ht, err := target.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := ht.Lock(target.HostFS(), target.Holder{PID: os.Getpid(), Command: []string{"dbio", "tpcc"}})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	small := smallfs.Mount(t, 64<<20)
	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "results")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"capture", "--device", regular, "--duration", "1s"}, "is not a block device"},
		{[]string{"capture", "--target", "/proc", "--duration", "1s"}, "no block device to trace"},
		{[]string{"capture", "--target", dir, "--duration", "0s"}, "--duration must be positive"},
		{[]string{"capture", "--duration", "1s"}, "give the device to capture"},
		{[]string{"replay", capDir, "--target", "/dev/null"}, "is a device node"},
		{[]string{"replay", capDir, "--target", small}, "free but the replay's working file needs 1.0 GiB"},
		{[]string{"replay", dir, "--target", small}, "is not a capture"},
		{[]string{"replay", capDir, "--target", small, "--pace", "fast"}, `--pace "fast"`},
		{[]string{"replay", capDir, "--target", small, "--speed", "0"}, "--speed 0 must be above 0"},
		{[]string{"replay", oneDir, "--target", held}, "is in use by another dbio run"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), append(tc.args, "--results", res))
			if code != exitUsage || !strings.Contains(out.String(), tc.want) {
				t.Errorf("exit code %d, output %q; want %d and %q", code, out.String(), exitUsage, tc.want)
			}
		})
	}
	for _, p := range []string{res, filepath.Join(small, "dbio")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written for bad input (%v)", p, err)
		}
	}
}

// TestTPCCCaptureReplays: dbio tpcc --capture on SQLite on a loop device's
// ext4 records its steps' block I/O into the run's results directory, and
// dbio replay of that directory plays it; --capture refuses a server of
// the user's with exit 2, writing nothing.
func TestTPCCCaptureReplays(t *testing.T) {
	t.Parallel()
	testenv.Require(t, os.Geteuid() == 0, "root", "run the test as root")
	testenv.RequireProgram(t, "fio", "apt-get install fio")
	disk := smallfs.MountDisk(t, 384<<20)
	res := filepath.Join(t.TempDir(), "results")
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"tpcc", "--engine", "sqlite", "--target", disk, "--warehouses", "1",
		"--users", "2", "--ramp-time", "0s", "--runtime", "3s", "--skip-checks", "--capture", "--results", res, "--name", "captured"}); code != exitOK {
		t.Fatalf("exit code %d: %s", code, out.String())
	}
	runs, _ := filepath.Glob(filepath.Join(res, "*-captured"))
	if len(runs) != 1 {
		t.Fatalf("results %v", runs)
	}
	rec, tr, err := capture.Load(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if rec.Signature.Writes.Requests == 0 || len(tr.Requests) != rec.Requests {
		t.Fatalf("the capture of the steps holds %d requests, %d writes", len(tr.Requests), rec.Signature.Writes.Requests)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"replay", runs[0], "--target", t.TempDir(), "--pace", "max", "--results", res, "--name", "replayed"}); code != exitOK {
		t.Fatalf("replay: exit code %d: %s", code, out.String())
	}
	out.Reset()
	other := filepath.Join(t.TempDir(), "results")
	code := run(context.Background(), testApp(&out), []string{"tpcc", "--dsn", "postgres://u@localhost/db", "--capture", "--results", other})
	if code != exitUsage || !strings.Contains(out.String(), "--capture traces the devices under the server dbio starts") {
		t.Errorf("--capture with --dsn: exit code %d, %q", code, out.String())
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("--capture with --dsn wrote %s (%v)", other, err)
	}
}
