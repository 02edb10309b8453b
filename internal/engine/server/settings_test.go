package server

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"dbio/internal/engine"
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
		{"line break", map[string]string{"x": "a\nb"}, nil, `demo setting x="a\nb": the value holds a line break (U+000A) at byte 1: give it on one line, without control characters`},
		{"escape in a name", map[string]string{"x\x1b[2J": "1"}, nil, `demo setting "x\x1b[2J": the name holds an escape character (U+001B) at byte 1`},
	}
	for _, tt := range tests {
		got, err := names.Apply(base, tt.user, engine.Confinement{})
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

// TestSettingProblems: the user's settings are checked against the
// server's own list (with the closest name suggested), the engine's
// classes judge what a value names, and a free-text setting nobody
// reviewed is refused.
func TestSettingProblems(t *testing.T) {
	root := t.TempDir()
	tg := filepath.Join(root, "T")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(tg, "dbio"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link inside dbio's directory that leads out of it.
	if err := os.Symlink(outside, filepath.Join(tg, "dbio", "away")); err != nil {
		t.Fatal(err)
	}
	names := SettingNames{
		Engine: "demo", Valid: regexp.MustCompile(`^[a-z_.-]+$`), NotAName: "a demo name",
		Same: strings.EqualFold, Norm: func(s string) string { return strings.ReplaceAll(s, "-", "_") },
		Bases: func(n string) []string {
			if rest, ok := strings.CutPrefix(n, "loose_"); ok {
				return []string{n, rest}
			}
			return []string{n}
		},
		Classes: map[string]engine.SettingClass{
			"datadir":     {Kind: engine.Owned, Why: "dbio places the data directory itself: use --target"},
			"log_file":    {Kind: engine.Path},
			"tmpdir":      {Kind: engine.Paths, Sep: ":"},
			"log_name":    {Kind: engine.FileName},
			"run_this":    {Kind: engine.Program, Why: "runs a program"},
			"load_this":   {Kind: engine.Library, Why: "loads code"},
			"description": {},
		},
	}
	known := &Known{Server: "Demo 1", Names: map[string]string{"work_mem": "work_mem", "log_file": "log-file", "comment": "comment", "description": "description"},
		Text: map[string]bool{"comment": true, "description": true, "log_file": true}}
	on := engine.Confinement{Data: tg}
	tests := []struct {
		name, value string
		want        string // "" when accepted
	}{
		{"work_mem", "4MB", ""},
		{"wrok_mem", "4MB", `wrok_mem=4MB: Demo 1 has no setting "wrok_mem" (did you mean work_mem?)`},
		{"zzzzzzzz", "1", `zzzzzzzz=1: Demo 1 has no setting "zzzzzzzz"`},
		{"datadir", "/srv/x", "datadir=/srv/x: dbio places the data directory itself: use --target"},
		{"loose-datadir", tg + "/dbio/x", "loose-datadir=" + tg + "/dbio/x: dbio places the data directory itself: use --target"},
		{"run_this", "true", "run_this=true: runs a program"},
		{"load_this", "x.so", "load_this=x.so: loads code"},
		{"log-file", tg + "/dbio/mariadb/x.log", ""},
		{"log-file", tg + "/dbio", ""},
		{"log-file", "x.log", ""},
		{"log-file", "", ""},
		{"log-file", "/var/log/x.log", "log-file=/var/log/x.log: /var/log/x.log is outside dbio's directory on the targets: give a path inside " + tg + "/dbio, or leave the setting out"},
		{"log-file", tg + "/dbio/../x.log", "is outside dbio's directory"},
		{"log-file", tg + "/dbio/away/x.log", "(" + outside + "/x.log once its links are followed) is outside"},
		{"log-file", tg + "/dbio/away/../../dbio/x.log", "is outside"},
		{"log-file", tg + "/dbio/missing/../x.log", ""},
		{"log-file", "../../x.log", "a relative path climbing out with .. may leave dbio's directory"},
		{"tmpdir", tg + "/dbio/a:" + tg + "/dbio/b", ""},
		{"tmpdir", tg + "/dbio/a:/tmp", "tmpdir=" + tg + "/dbio/a:/tmp: /tmp is outside"},
		{"log_name", "x.log", ""},
		{"log_name", "../x.log", "give a file name without a directory part"},
		{"description", "anything at all", ""},
		{"comment", "x", "dbio has not reviewed what Demo 1's setting comment names"},
		{"work_mem", "a\nb", `demo setting work_mem="a\nb": the value holds a line break`},
	}
	for _, tt := range tests {
		ps := names.problems(map[string]string{tt.name: tt.value}, on, known)
		got := ""
		if len(ps) > 0 {
			got = ps[0].Error()
		}
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s=%s: %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
	// Without the server's list, the classes still judge (Apply, at start).
	if ps := names.problems(map[string]string{"wrok_mem": "1", "datadir": "/x"}, on, nil); len(ps) != 1 || !strings.Contains(ps[0].Error(), "datadir=/x") {
		t.Errorf("without the list: %v", ps)
	}
}

// TestSameDataDir: the data directory the server reports is compared
// with dbio's, links followed and a trailing slash ignored.
func TestSameDataDir(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	os.Mkdir(real, 0o755)
	os.Symlink(real, filepath.Join(root, "link"))
	if err := SameDataDir(real+"/", filepath.Join(root, "link")); err != nil {
		t.Errorf("the same directory through a link: %v", err)
	}
	err := SameDataDir("/var/lib/mysql/", real)
	if err == nil || !strings.Contains(err.Error(), "the server reports its data directory as /var/lib/mysql/, not "+real+" where dbio placed it") {
		t.Errorf("another directory: %v", err)
	}
}
