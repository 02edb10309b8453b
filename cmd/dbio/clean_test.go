package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"dbio/internal/target"
)

// dbio clean says what it would remove and how much, removes it only with
// --yes, and never touches what it did not create or what a link points to.
func TestCleanRemovesOnlyWhatDbioCreated(t *testing.T) {
	dir := t.TempDir()
	tg, err := target.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fio, err := tg.Sub("fio")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fio, "work.0.0"), make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(tg.Dir, "mine")
	outside := filepath.Join(t.TempDir(), "precious")
	for _, f := range []string{filepath.Join(mine, "notes"), outside} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(fio, "link")); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"clean", "--target", dir}); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{filepath.Join(tg.Dir, "fio") + ": 3.0 MiB", filepath.Join(tg.Dir, "mine") + ": not created by dbio, left alone", "would be removed; run again with --yes"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("clean does not say %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(fio, "work.0.0")); err != nil {
		t.Fatalf("clean without --yes removed something: %v", err)
	}

	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"clean", "--target", dir, "--yes"}); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if _, err := os.Stat(fio); !os.IsNotExist(err) {
		t.Errorf("fio's work files are still there: %v", err)
	}
	for _, keep := range []string{filepath.Join(mine, "notes"), outside} {
		if b, err := os.ReadFile(keep); err != nil || string(b) != "keep" {
			t.Errorf("%s was touched: %q, %v", keep, b, err)
		}
	}

	// A server still running from a directory is never pulled from under it.
	pg, err := tg.Sub("postgres")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pg, "postmaster.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"clean", "--target", dir, "--yes"}); code == exitOK || !strings.Contains(out.String(), "still runs from it") {
		t.Errorf("exit %d, output:\n%s", code, out.String())
	}
	if _, err := os.Stat(pg); err != nil {
		t.Errorf("the running server's directory was removed: %v", err)
	}

	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"clean"}); code != exitUsage || !strings.Contains(out.String(), "--target") {
		t.Errorf("clean without a target: exit %d:\n%s", code, out.String())
	}
}
