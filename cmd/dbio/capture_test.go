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
