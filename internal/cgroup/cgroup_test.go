package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

// Find reads only the sysfs root it is given, and tells a v1 hierarchy by
// its controller's own file and a v2 one by the controllers it lists.
func TestFind(t *testing.T) {
	for _, tt := range []struct {
		name   string
		files  map[string]string // path under the root -> content
		v1, v2 string            // under the root, "" for none
	}{
		{"none", nil, "", ""},
		{"v1 memory", map[string]string{"fs/cgroup/memory/memory.limit_in_bytes": ""}, "fs/cgroup/memory", ""},
		{"v1 directory without the controller's file", map[string]string{"fs/cgroup/memory/tasks": ""}, "", ""},
		{"v2 with memory", map[string]string{"fs/cgroup/cgroup.controllers": "cpu io memory\n"}, "", "fs/cgroup"},
		{"v2 without memory", map[string]string{"fs/cgroup/cgroup.controllers": "cpu io\n"}, "", ""},
		{"word, not substring", map[string]string{"fs/cgroup/cgroup.controllers": "memoryx\n"}, "", ""},
		{"hybrid unified", map[string]string{"fs/cgroup/unified/cgroup.controllers": "memory\n"}, "", "fs/cgroup/unified"},
		{"both", map[string]string{"fs/cgroup/memory/memory.limit_in_bytes": "", "fs/cgroup/unified/cgroup.controllers": "memory\n"},
			"fs/cgroup/memory", "fs/cgroup/unified"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range tt.files {
				full := filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			under := func(p string) string {
				if p == "" {
					return ""
				}
				return filepath.Join(root, p)
			}
			v1, v2 := Find(root, "memory", "memory.limit_in_bytes", "memory")
			if v1 != under(tt.v1) || v2 != under(tt.v2) {
				t.Errorf("Find = %q, %q; want %q, %q", v1, v2, under(tt.v1), under(tt.v2))
			}
		})
	}
	if v1, v2 := Find("", "memory", "memory.limit_in_bytes", "memory"); v1 != "" || v2 != "" {
		t.Errorf("Find without a root = %q, %q; want nothing", v1, v2)
	}
}
