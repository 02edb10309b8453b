package mysql

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"dbio/internal/engine"
)

// TestSettingClassesCoverTheServer has the installed MariaDB list its
// options: every free-text one is in settingClasses (so that none that
// names a file, a program or a library passes unreviewed), and the
// options the confinement rests on have the class it needs.
func TestSettingClassesCoverTheServer(t *testing.T) {
	e := realEngine(t)
	known, err := e.listSettings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(known.Names) < 500 || known.Names["datadir"] == "" || !known.Text["datadir"] {
		t.Fatalf("%s lists %d options, datadir as %q", known.Server, len(known.Names), known.Names["datadir"])
	}
	for n := range known.Text {
		if _, ok := settingClasses[n]; !ok {
			t.Errorf("%s lists the free-text option %s, which settingClasses does not classify: review what it names and add it", known.Server, known.Names[n])
		}
	}
	for n := range settingClasses {
		if n != normName(n) {
			t.Errorf("settingClasses names %s: write names as normName spells them", n)
		}
	}
	for kind, names := range map[engine.SettingKind][]string{
		engine.Owned:   {"datadir", "socket", "port", "pid_file", "bind_address", "innodb_log_group_home_dir", "user", "chroot", "extra_port"},
		engine.Program: {"init_file", "init_connect", "wsrep_notify_cmd", "wsrep_sst_method"},
		engine.Library: {"plugin_load", "plugin_load_add", "plugin_dir", "basedir", "wsrep_provider"},
		engine.Path: {"log_error", "innodb_data_home_dir", "innodb_undo_directory", "innodb_tmpdir", "general_log_file", "slow_query_log_file",
			"log_bin", "relay_log", "secure_file_priv", "ssl_key", "aria_log_dir_path", "log_tc"},
		engine.Paths:    {"tmpdir", "innodb_data_file_path", "innodb_temp_data_file_path"},
		engine.FileName: {"log_basename"},
	} {
		for _, n := range names {
			if c := settingClasses[n]; c.Kind != kind {
				t.Errorf("%s is of kind %d, want %d", n, c.Kind, kind)
			}
		}
	}
}

func TestParseHelp(t *testing.T) {
	out := `mariadbd  Ver 10.11.19-MariaDB for debian-linux-gnu on x86_64 (Debian 12)

  --datadir=name      Path to the database root directory
  --binlog-format=name 
                      What form of binary logging the master will use: either
                      ROW for row-based binary logging.
  --alter-algorithm[=name] 
                      Specify the alter table algorithm. One of: DEFAULT, COPY,
                      INPLACE, NOCOPY, INSTANT
  -a, --ansi          Use ANSI SQL syntax instead of MySQL syntax.
  --port=#            Port number to use for connection
  --log-bin[=name]    Log update queries in binary format.

Variables (--variable-name=value)
and boolean options {FALSE|TRUE}  Value (after reading options)
datadir                                                      /var/lib/mysql/
`
	k := parseHelp(out)
	wantNames := map[string]string{"datadir": "datadir", "binlog_format": "binlog-format", "alter_algorithm": "alter-algorithm", "ansi": "ansi", "port": "port", "log_bin": "log-bin"}
	if !reflect.DeepEqual(k.Names, wantNames) {
		t.Errorf("names %v, want %v", k.Names, wantNames)
	}
	if wantText := map[string]bool{"datadir": true, "binlog_format": true, "log_bin": true}; !reflect.DeepEqual(k.Text, wantText) {
		t.Errorf("free text %v, want %v", k.Text, wantText)
	}
}

func TestOptionBases(t *testing.T) {
	for in, want := range map[string][]string{
		"datadir":                   {"datadir"},
		"loose_datadir":             {"loose_datadir", "datadir"},
		"skip_log_bin":              {"skip_log_bin", "log_bin"},
		"loose_skip_name_resolve":   {"loose_skip_name_resolve", "skip_name_resolve", "name_resolve"},
		"hot_cache.key_buffer_size": {"key_buffer_size"},
	} {
		if got := optionBases(in); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("optionBases(%s) = %v, want %v", in, got, want)
		}
	}
}
