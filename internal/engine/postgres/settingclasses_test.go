package postgres

import (
	"context"
	"strings"
	"testing"

	"dbio/internal/engine"
)

// TestSettingClassesCoverTheServer has the installed PostgreSQL list its
// settings: every free-text one is in settingClasses (so that none that
// names a file, a program or a library passes unreviewed), and the
// settings the confinement rests on have the class it needs.
func TestSettingClassesCoverTheServer(t *testing.T) {
	e := realEngine(t)
	known, err := e.listSettings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(known.Names) < 300 || !strings.HasPrefix(known.Server, "PostgreSQL ") {
		t.Fatalf("the server lists %d settings as %q", len(known.Names), known.Server)
	}
	for n := range known.Text {
		if _, ok := settingClasses[n]; !ok {
			t.Errorf("%s lists the free-text setting %s, which settingClasses does not classify: review what it names and add it", known.Server, known.Names[n])
		}
	}
	for n := range settingClasses {
		if n != strings.ToLower(n) {
			t.Errorf("settingClasses names %s: write names in lower case, as Norm spells them", n)
		}
	}
	for kind, names := range map[engine.SettingKind][]string{
		engine.Owned:    {"data_directory", "config_file", "hba_file", "ident_file", "unix_socket_directories", "port", "listen_addresses", "include", "include_dir", "include_if_exists"},
		engine.Program:  {"archive_command", "archive_cleanup_command", "restore_command", "recovery_end_command", "ssl_passphrase_command"},
		engine.Library:  {"shared_preload_libraries", "session_preload_libraries", "local_preload_libraries", "dynamic_library_path", "jit_provider", "archive_library"},
		engine.Path:     {"log_directory", "external_pid_file", "ssl_cert_file", "ssl_key_file", "ssl_ca_file", "ssl_crl_file", "ssl_crl_dir", "ssl_dh_params_file", "krb_server_keyfile"},
		engine.FileName: {"log_filename"},
	} {
		for _, n := range names {
			if c := settingClasses[n]; c.Kind != kind {
				t.Errorf("%s is of kind %d, want %d", n, c.Kind, kind)
			}
		}
	}
}

func TestParseDescribeConfig(t *testing.T) {
	out := "archive_command\tsighup\tWrite-Ahead Log / Archiving\tSTRING\t\t\t\tSets the shell command.\t\n" +
		"work_mem\tuser\tResource Usage / Memory\tINTEGER\t4096\t64\t2147483647\tSets the maximum memory.\t\n" +
		"DateStyle\tuser\tClient Connection Defaults\tSTRING\tISO, MDY\t\t\tSets the display format.\t\n"
	k := parseDescribeConfig(out)
	if k.Names["work_mem"] != "work_mem" || k.Names["datestyle"] != "DateStyle" || !k.Text["archive_command"] || k.Text["work_mem"] {
		t.Errorf("parseDescribeConfig = %+v", k)
	}
	// The developer options it leaves out are added.
	if k.Names["zero_damaged_pages"] == "" || !k.Text["application_name"] {
		t.Errorf("developer settings missing: %+v", k)
	}
}
