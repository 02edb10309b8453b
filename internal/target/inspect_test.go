package target

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestInspect(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)
	foreign := t.TempDir()
	os.Mkdir(filepath.Join(foreign, DirName), 0o755)
	missing := filepath.Join(root, "typo", "data")
	underFile := filepath.Join(file, "data")
	tests := []struct {
		path      string
		mayCreate bool
		want      string // "" for no problem
	}{
		{root, false, ""},
		{"", false, "empty"},
		{missing, false, "does not exist: create it (mkdir -p " + missing + ") or pass --create-target"},
		{missing, true, ""},
		{underFile, true, "is not a directory"},
		{"/dev/null", false, "device node"},
		{file, false, "not a directory"},
		{foreign, false, "dbio did not create"},
	}
	for _, tt := range tests {
		in, problems := Inspect(HostFS(), tt.path, tt.mayCreate)
		switch {
		case tt.want == "" && len(problems) > 0:
			t.Errorf("Inspect(%q, %v): %v", tt.path, tt.mayCreate, problems)
		case tt.want != "" && (len(problems) != 1 || !strings.Contains(problems[0].Error(), tt.want)):
			t.Errorf("Inspect(%q, %v) = %v, want a problem saying %q", tt.path, tt.mayCreate, problems, tt.want)
		case tt.want == "" && (in.FreeBytes == 0 || in.Dev == 0):
			t.Errorf("Inspect(%q): %+v, want free space and device", tt.path, in)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Error("Inspect created a path")
	}
}

// TestInspectReadOnlyAndUnwritable mounts a read-only tmpfs (as root) or
// removes write permission (as another user).
func TestInspectReadOnlyAndUnwritable(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
		if _, problems := Inspect(HostFS(), dir, false); len(problems) != 1 || !strings.Contains(problems[0].Error(), "is not writable by this user") {
			t.Fatalf("unwritable: %v", problems)
		}
		return
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a read-only tmpfs: %v: %s", err, out)
	}
	defer syscall.Unmount(dir, 0)
	in, problems := Inspect(HostFS(), dir, false)
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "read-only filesystem") {
		t.Fatalf("read-only: %v", problems)
	}
	if in.Storage.FSType != "tmpfs" || len(in.Storage.Physical) != 0 {
		t.Errorf("storage %+v, want tmpfs without a block device", in.Storage)
	}
	if _, problems := Inspect(HostFS(), filepath.Join(dir, "new"), true); len(problems) != 1 || !strings.Contains(problems[0].Error(), "read-only filesystem") {
		t.Fatalf("to be created on a read-only filesystem: %v", problems)
	}
}

func TestSpaceProblems(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	in, _ := Inspect(HostFS(), a, false)
	free := in.FreeBytes
	if got := SpaceProblems([]Need{{Path: a, Bytes: 1, What: "a byte"}}); len(got) != 0 {
		t.Fatal(got)
	}
	// Two needs on one filesystem add up, each alone fitting.
	got := SpaceProblems([]Need{{Path: a, Bytes: free/2 + 1<<30, What: "TPC-C at this scale"}, {Path: filepath.Join(b, "results"), Bytes: free/2 + 1<<30, What: "the results"}})
	if len(got) != 1 || !strings.Contains(got[0].Error(), "the filesystem of "+a+" and "+filepath.Join(b, "results")) || !strings.Contains(got[0].Error(), "TPC-C at this scale and the results together need about") {
		t.Fatalf("summed needs: %v", got)
	}
	// What dbio will replace counts as free.
	if got := SpaceProblems([]Need{{Path: a, Bytes: free + 1<<30, Reclaim: 2 << 30, What: "TPC-C"}}); len(got) != 0 {
		t.Fatalf("reclaim not counted: %v", got)
	}
	got = SpaceProblems([]Need{{Path: a, Bytes: 1 << 62, Reclaim: 1 << 20, What: "tpcc at this scale"}})
	if len(got) != 1 || !strings.Contains(got[0].Error(), "needs about 4.0 EiB") || !strings.Contains(got[0].Error(), "plus 1.0 MiB of dbio's earlier files") {
		t.Fatalf("too little space: %v", got)
	}
}
