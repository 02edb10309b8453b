package server

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestSettingNamesApply(t *testing.T) {
	names := SettingNames{
		Engine:   "demo",
		Valid:    regexp.MustCompile(`^[A-Za-z_]+$`),
		NotAName: "a demo name",
		Same:     strings.EqualFold,
	}
	base := []Setting{{Name: "port", Value: "5432", Why: "dbio's"}, {Name: "fsync", Value: "on", Why: "safe"}}
	tests := []struct {
		name    string
		user    map[string]string
		want    []Setting
		wantErr string
	}{
		{"none", nil, base, ""},
		{"replaces in place, appends in name order", map[string]string{"zeta": "1", "PORT": "1", "alpha": "2"}, []Setting{
			{Name: "PORT", Value: "1", Why: "set by the user"}, {Name: "fsync", Value: "on", Why: "safe"},
			{Name: "alpha", Value: "2", Why: "set by the user"}, {Name: "zeta", Value: "1", Why: "set by the user"},
		}, ""},
		{"bad name", map[string]string{"bad name": "1"}, nil, `demo setting "bad name" is not a demo name`},
		{"line break", map[string]string{"x": "a\nb"}, nil, "demo setting x: the value may not contain a line break"},
	}
	for _, tt := range tests {
		got, err := names.Apply(base, tt.user)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Apply = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	if base[0].Value != "5432" {
		t.Error("Apply changed dbio's own list")
	}
	if got := SettingsMap(base, []Setting{{Name: "port", Value: "1"}}); !reflect.DeepEqual(got, map[string]string{"port": "1", "fsync": "on"}) {
		t.Errorf("SettingsMap = %v", got)
	}
}
