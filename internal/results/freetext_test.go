package results

import "testing"

// A target's free inodes are said beside its free space when the run kept
// them (it keeps them when they are low).
func TestFreeText(t *testing.T) {
	twelve := uint64(12)
	for _, tt := range []struct {
		t    TargetInfo
		want string
	}{
		{TargetInfo{FreeBytes: 1 << 30}, "1.0 GiB"},
		{TargetInfo{FreeBytes: 1 << 30, FreeInodes: &twelve}, "1.0 GiB and 12 inodes"},
	} {
		if got := tt.t.FreeText(); got != tt.want {
			t.Errorf("FreeText() = %q, want %q", got, tt.want)
		}
	}
}
