package target

import (
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/smallfs"
)

// A filesystem out of inodes is full whatever its free space: the space
// preflight counts FilesPerNeed inodes for each need, adds them up per
// filesystem as it does bytes, and refuses one without as many free,
// naming the target, its free inodes and the fix.
func TestSpaceProblemsCountInodes(t *testing.T) {
	tests := []struct {
		name  string
		leave uint64 // free inodes left on a 1 GiB tmpfs
		needs func(fs string) []Need
		want  []string // substrings of the one problem; none for no problem
	}{
		{"no inode left", 0, func(fs string) []Need {
			return []Need{{Path: filepath.Join(fs, "target"), Bytes: 1 << 20, What: "tpcc at this scale"}}
		}, []string{"target " + "%FS%/target has 0 free inodes", "but tpcc at this scale needs about 1024 (1024 counted for each)", "remove files there", "mkfs.ext4 -N, tmpfs -o nr_inodes"}},
		{"room for one need", 1500, func(fs string) []Need {
			return []Need{{Path: fs, Bytes: 1 << 20, What: "tpcc at this scale"}}
		}, nil},
		{"not for two on one filesystem", 1500, func(fs string) []Need {
			return []Need{{Path: fs, Bytes: 1 << 20, What: "tpcc at this scale"}, {Path: filepath.Join(fs, "results"), Bytes: 1 << 20, What: "the results"}}
		}, []string{"the filesystem of %FS% and %FS%/results has 1500 free inodes", "tpcc at this scale and the results together need about 2048"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := smallfs.MountInodes(t, 1<<30, 4096)
			if err := smallfs.FillInodes(fs, tt.leave); err != nil {
				t.Fatal(err)
			}
			got := SpaceProblems(tt.needs(fs))
			if len(tt.want) == 0 {
				if len(got) != 0 {
					t.Fatalf("refused: %v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("problems %v, want one", got)
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "%FS%", fs); !strings.Contains(got[0].Error(), w) {
					t.Errorf("problem %q lacks %q", got[0], w)
				}
			}
		})
	}
}

// The free inodes are shown beside the free space only when they are low.
func TestFreeInodesIfLow(t *testing.T) {
	fs := smallfs.MountInodes(t, 1<<30, 4096)
	if err := smallfs.FillInodes(fs, 12); err != nil {
		t.Fatal(err)
	}
	if got := FreeInodesIfLow(fs); got == nil || *got != 12 {
		t.Errorf("FreeInodesIfLow on a filesystem with 12 left = %v, want 12", got)
	}
	roomy := smallfs.MountInodes(t, 1<<30, 1<<20)
	if got := FreeInodesIfLow(roomy); got != nil {
		t.Errorf("FreeInodesIfLow with a million free = %d, want nil", *got)
	}
	if got := FreeInodesIfLow(filepath.Join(fs, "missing")); got != nil {
		t.Errorf("FreeInodesIfLow of a missing path = %d, want nil", *got)
	}
}
