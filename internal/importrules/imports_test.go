package importrules

import (
	"bufio"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// archDoc is the design's file, from the module root.
const archDoc = "docs/ARCHITECTURE.md"

// TestImportsFollowArchitecture checks every dbio import of every non-test
// file of the module against the package table of docs/ARCHITECTURE.md.
func TestImportsFollowArchitecture(t *testing.T) {
	root, module, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, archDoc))
	if err != nil {
		t.Fatalf("the design's package table: %v", err)
	}
	defer f.Close()
	table, err := parseTable(f)
	if err != nil {
		t.Fatalf("%s: %v", archDoc, err)
	}
	pkgs, err := modulePackages(root, module)
	if err != nil {
		t.Fatal(err)
	}
	// A walk that found nothing would pass vacuously.
	if _, ok := pkgs["importrules"]; !ok || len(pkgs) < 10 {
		t.Fatalf("found %d packages under %s, not this one among them: the walk is broken", len(pkgs), root)
	}
	for _, p := range check(table, pkgs) {
		t.Error(p)
	}
}

// row is one package's line of the table.
type row struct {
	line      int             // in the document, for messages
	mayImport map[string]bool // short names
}

// parseTable reads the Markdown table whose header is
// "| package | owns | may import |". Package names are written in backticks;
// text outside them (a note such as "(edge)") is ignored, and a cell with no
// name ("—") allows nothing.
func parseTable(r io.Reader) (map[string]row, error) {
	table := map[string]row{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	in, found := false, false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			in = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case len(cells) == 3 && strings.EqualFold(cells[0], "package") && strings.EqualFold(cells[1], "owns") && strings.EqualFold(cells[2], "may import"):
			if found {
				return nil, fmt.Errorf("line %d: a second package table; keep one", n)
			}
			in, found = true, true
			continue
		case !in || strings.Trim(line, "|-: ") == "":
			continue // another table, or the header's separator
		case len(cells) != 3:
			return nil, fmt.Errorf("line %d: %d cells, want package | owns | may import (a '|' inside a cell splits it)", n, len(cells))
		}
		names := backticked(cells[0])
		if len(names) != 1 {
			return nil, fmt.Errorf("line %d: the package cell %q must name one package in backticks", n, cells[0])
		}
		name := names[0]
		if prev, dup := table[name]; dup {
			return nil, fmt.Errorf("line %d: `%s` has a row already (line %d)", n, name, prev.line)
		}
		allowed := map[string]bool{}
		for _, imp := range backticked(cells[2]) {
			allowed[imp] = true
		}
		table[name] = row{line: n, mayImport: allowed}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New(`no table with the header "| package | owns | may import |"`)
	}
	return table, nil
}

// backticked returns the `quoted` words of s.
func backticked(s string) []string {
	var out []string
	parts := strings.Split(s, "`")
	for i := 1; i < len(parts); i += 2 {
		if w := strings.TrimSpace(parts[i]); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// pkg is one package of the module, as its non-test files see it.
type pkg struct {
	dir     string                // from the module root
	imports map[string]importSite // by short name of the dbio package imported
}

// importSite is one dbio import of a package and the files that make it.
type importSite struct {
	path  string   // as written in the import
	files []string // from the module root, sorted
}

// sourceFiles lists every non-test .go file under root, from the root.
// testdata, vendor and directories the go command ignores (".x", "_x") are
// skipped, as go build skips them.
func sourceFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	return files, err
}

// modulePackages parses the imports of every non-test .go file under root
// and groups them by package directory.
func modulePackages(root, module string) (map[string]pkg, error) {
	files, err := sourceFiles(root)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]pkg{}
	fset := token.NewFileSet()
	for _, rel := range files {
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.ImportsOnly)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", rel, err)
		}
		dir := path.Dir(rel)
		short := shortDir(dir)
		p, ok := pkgs[short]
		if !ok {
			p = pkg{dir: dir, imports: map[string]importSite{}}
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: import %s: %w", rel, spec.Path.Value, err)
			}
			name, ours := shortImport(module, imp)
			if !ours {
				continue
			}
			site := p.imports[name]
			site.path = imp
			if !slices.Contains(site.files, rel) {
				site.files = append(site.files, rel) // files come sorted from the walk
			}
			p.imports[name] = site
		}
		pkgs[short] = p
	}
	return pkgs, nil
}

// shortDir names a package directory as the table does: below internal/
// without that prefix, elsewhere from the module root.
func shortDir(dir string) string {
	if rest, ok := strings.CutPrefix(dir, "internal/"); ok {
		return rest
	}
	return dir
}

// shortImport names an import path as the table does; ours is false for
// the standard library and other modules.
func shortImport(module, imp string) (name string, ours bool) {
	rest, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return "", false
	}
	return shortDir(rest), true
}

// check returns every disagreement between the table and the packages, one
// message each, saying what to change and where.
func check(table map[string]row, pkgs map[string]pkg) []string {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		p := pkgs[name]
		r, ok := table[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s has no row in %s: add a row `%s` saying what it owns and which dbio packages it may import", p.dir, archDoc, name))
			continue
		}
		for _, imp := range slices.Sorted(maps.Keys(p.imports)) {
			if r.mayImport[imp] {
				continue
			}
			site := p.imports[imp]
			problems = append(problems, fmt.Sprintf("%s imports %q, which the row `%s` of %s (line %d) does not allow: remove the import, or add `%s` to that row's \"may import\" if the design should change",
				strings.Join(site.files, ", "), site.path, name, archDoc, r.line, imp))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(table)) {
		r := table[name]
		p, exists := pkgs[name]
		if !exists {
			problems = append(problems, fmt.Sprintf("the row `%s` of %s (line %d) names no package of the module: remove the row, or correct its name", name, archDoc, r.line))
			continue
		}
		for _, imp := range slices.Sorted(maps.Keys(r.mayImport)) {
			_, isPackage := pkgs[imp]
			_, imported := p.imports[imp]
			switch {
			case !isPackage:
				problems = append(problems, fmt.Sprintf("the row `%s` of %s (line %d) allows `%s`, which is no package of the module: remove it from the row", name, archDoc, r.line, imp))
			case !imported:
				problems = append(problems, fmt.Sprintf("the row `%s` of %s (line %d) allows `%s`, but no non-test file of %s imports it: remove it from the row, so that the table stays what the code is", name, archDoc, r.line, imp, p.dir))
			}
		}
	}
	return problems
}

// moduleRoot finds go.mod above the test's directory and the module's path.
func moduleRoot() (root, module string, err error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(m), `"`), nil
				}
			}
			return "", "", fmt.Errorf("%s/go.mod names no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestCheck is the checking logic on small made-up modules, so that every
// kind of disagreement is seen to fail.
func TestCheck(t *testing.T) {
	allows := func(line int, names ...string) row {
		r := row{line: line, mayImport: map[string]bool{}}
		for _, n := range names {
			r.mayImport[n] = true
		}
		return r
	}
	imports := func(dir string, sites map[string]string) pkg {
		p := pkg{dir: dir, imports: map[string]importSite{}}
		for name, file := range sites {
			p.imports[name] = importSite{path: "dbio/internal/" + name, files: []string{file}}
		}
		return p
	}
	leaf := imports("internal/results", nil)
	for _, tt := range []struct {
		name  string
		table map[string]row
		pkgs  map[string]pkg
		want  []string // substrings, one per expected problem, in order
	}{
		{
			name:  "agrees",
			table: map[string]row{"results": allows(3), "report": allows(4, "results")},
			pkgs:  map[string]pkg{"results": leaf, "report": imports("internal/report", map[string]string{"results": "internal/report/report.go"})},
		},
		{
			name:  "an import the row does not allow",
			table: map[string]row{"results": allows(3), "target": allows(4), "report": allows(5, "results")},
			pkgs: map[string]pkg{"results": leaf, "target": imports("internal/target", nil),
				"report": imports("internal/report", map[string]string{"results": "internal/report/report.go", "target": "internal/report/out.go"})},
			want: []string{"internal/report/out.go imports \"dbio/internal/target\", which the row `report` of docs/ARCHITECTURE.md (line 5) does not allow"},
		},
		{
			name:  "a package without a row",
			table: map[string]row{"results": allows(3)},
			pkgs:  map[string]pkg{"results": leaf, "stats": imports("internal/stats", nil)},
			want:  []string{"package internal/stats has no row in docs/ARCHITECTURE.md"},
		},
		{
			name:  "a row without a package",
			table: map[string]row{"results": allows(3), "util": allows(9)},
			pkgs:  map[string]pkg{"results": leaf},
			want:  []string{"the row `util` of docs/ARCHITECTURE.md (line 9) names no package"},
		},
		{
			name:  "a row allowing a package that does not exist",
			table: map[string]row{"results": allows(3, "metric")},
			pkgs:  map[string]pkg{"results": leaf},
			want:  []string{"allows `metric`, which is no package of the module"},
		},
		{
			name:  "a row allowing an import nothing makes",
			table: map[string]row{"results": allows(3), "report": allows(4, "results")},
			pkgs:  map[string]pkg{"results": leaf, "report": imports("internal/report", nil)},
			want:  []string{"the row `report` of docs/ARCHITECTURE.md (line 4) allows `results`, but no non-test file of internal/report imports it"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := check(tt.table, tt.pkgs)
			if len(got) != len(tt.want) {
				t.Fatalf("check found %d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want it to say %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestParseTable reads the table's rows and refuses tables the check could misread.
func TestParseTable(t *testing.T) {
	const header = "| package | owns | may import |\n|---|---|---|\n"
	for _, tt := range []struct {
		name    string
		doc     string
		want    map[string][]string // package -> may import
		wantErr string
	}{
		{
			name: "rows, notes and none",
			doc: "# Design\n\n| interface | defined in |\n|---|---|\n| `x` | `y` |\n\n" + header +
				"| `cmd/dbio` | wiring | `runner`, `engine/sqlite` *(edge)* |\n" +
				"| `runner` | runs | `results` |\n" +
				"| `results` | records | — |\n\nAfter the table.\n| `not` | a | row |\n",
			want: map[string][]string{"cmd/dbio": {"engine/sqlite", "runner"}, "runner": {"results"}, "results": nil},
		},
		{name: "no table", doc: "# Design\n\nNothing here.\n", wantErr: "no table"},
		{name: "two rows for one package", doc: header + "| `a` | x | — |\n| `a` | y | — |\n", wantErr: "`a` has a row already (line 3)"},
		{name: "a row naming two packages", doc: header + "| `a`, `b` | x | — |\n", wantErr: "must name one package"},
		{name: "a pipe inside a cell", doc: header + "| `a` | x | y | — |\n", wantErr: "4 cells"},
		{name: "two tables", doc: header + "| `a` | x | — |\n\n" + header, wantErr: "a second package table"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			table, err := parseTable(strings.NewReader(tt.doc))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseTable error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for name, r := range table {
				got[name] = slices.Sorted(maps.Keys(r.mayImport))
				if len(got[name]) == 0 {
					got[name] = nil
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("parseTable = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestModulePackages parses a made-up module: test files, testdata and
// hidden directories do not count; blank imports do.
func TestModulePackages(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module dbio\n")
	write("cmd/dbio/main.go", "package main\nimport (\n\t\"fmt\"\n\t_ \"dbio/internal/engine/sqlite\"\n\t\"dbio/internal/runner\"\n)\n")
	write("cmd/dbio/main_test.go", "package main\nimport \"dbio/internal/testenv\"\n")
	write("internal/runner/run.go", "package runner\nimport r \"dbio/internal/results\"\n")
	write("internal/runner/testdata/x.go", "package x\nimport \"dbio/internal/report\"\n")
	write("internal/.hidden/x.go", "package x\nimport \"dbio/internal/report\"\n")
	write("internal/results/results.go", "package results\nimport \"github.com/other/dbio/internal/x\"\n")
	write("internal/engine/sqlite/sqlite.go", "package sqlite\n")
	pkgs, err := modulePackages(root, "dbio")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for name, p := range pkgs {
		got[name] = nil
		for imp, site := range p.imports {
			got[name] = append(got[name], imp+"@"+strings.Join(site.files, ","))
		}
		sort.Strings(got[name])
	}
	want := map[string][]string{
		"cmd/dbio":      {"engine/sqlite@cmd/dbio/main.go", "runner@cmd/dbio/main.go"},
		"runner":        {"results@internal/runner/run.go"},
		"results":       nil,
		"engine/sqlite": nil,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(pkgs) != len(want) {
		t.Errorf("modulePackages found %v (%d packages), want %v", got, len(pkgs), want)
	}

	write("internal/broken/broken.go", "package broken\nimport (\n")
	if _, err := modulePackages(root, "dbio"); err == nil || !strings.Contains(err.Error(), "internal/broken/broken.go") {
		t.Errorf("a file that does not parse: %v, want an error naming it", err)
	}
}
