package results

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// moduleRoot is the root of dbio's source tree, two levels above this package.
const moduleRoot = "../.."

func TestCatalogueDefinesEachFigureOnce(t *testing.T) {
	seen := map[FigureName]bool{}
	for _, d := range Catalogue() {
		if seen[d.Name] {
			t.Errorf("%q is defined twice", d.Name)
		}
		seen[d.Name] = true
		if d.Title == "" {
			t.Errorf("%q has no title", d.Name)
		}
		if n := strings.Count(string(d.Name), "*"); n > 1 || (d.Of && n != 1) {
			t.Errorf("%q: a family has one \"*\", and one of figures (Of) has it", d.Name)
		}
		if d.Steady && !d.Throughput() {
			t.Errorf("%q: a steady-state criterion judges throughput, and the catalogue does not call it that", d.Name)
		}
		if d.In == 0 && !d.Steady {
			t.Errorf("%q is recorded nowhere and judged by no criterion", d.Name)
		}
		if d.Better < LowerBetter || d.Better > HigherBetter || d.Across < Apart || d.Across > Largest {
			t.Errorf("%q: better %d, across %d", d.Name, d.Better, d.Across)
		}
	}
}

func TestCatalogueLookup(t *testing.T) {
	tests := []struct {
		name         FigureName
		defined      bool
		title, unit  string
		better       Better
		across       Combine
		steady       bool
		throughput   bool
		shortHeading string
	}{
		{FigureTPM, true, "TPM", "tx/min", HigherBetter, Summed, true, true, "TPM"},
		{FigureTPMPerUser, true, "TPM per user", "tx/min/user", HigherBetter, Apart, false, false, "TPM/user"},
		{FigureIOPS, true, "IOPS", "I/O per s", HigherBetter, Summed, true, true, "IOPS"},
		{FigureLatP99US, true, "p99 latency", "µs", LowerBetter, Merged, false, false, "p99"},
		{FigureErrorsPerSec, true, "errors per second", "errors/s", LowerBetter, Summed, false, false, "errors per second"},
		// A family of figures: the part that varies names another figure.
		{AtMaxUsers(FigureInteractiveLatencyP95), true, "interactive p95 latency at the most users under the ceiling", "ms", NeitherBetter, Apart, false, false, ""},
		// The part that varies is no figure.
		{AtMaxUsers("nosuch"), false, "nosuch at max users", "", NeitherBetter, Apart, false, false, ""},
		// A device's latency over a backup, and a tenant's backup in a noisy phase.
		{DeviceLatency("nvme0n1", "p99"), true, "nvme0n1 p99 latency", "ms", LowerBetter, Apart, false, false, ""},
		{BackupSeconds("t3", 2), true, "backup t3_2", "s", LowerBetter, Apart, false, false, ""},
		// An exact name is found before a family it would also match.
		{FigureInteractiveLatencyP99, true, "interactive p99 latency", "ms", LowerBetter, Merged, false, false, ""},
		{FigureBackupMBPerSec, true, "backup MB/s", "MB/s", HigherBetter, Apart, false, false, ""},
		// A figure an older dbio recorded, read back.
		{"old_figure", false, "old figure", "", NeitherBetter, Apart, false, false, ""},
	}
	for _, tt := range tests {
		d := tt.name.Def()
		if tt.name.Defined() != tt.defined || d.Name != tt.name || d.Title != tt.title || d.Unit != tt.unit || d.Better != tt.better ||
			d.Across != tt.across || d.Steady != tt.steady || d.Throughput() != tt.throughput {
			t.Errorf("%q: defined %v, %+v (throughput %v)", tt.name, tt.name.Defined(), d, d.Throughput())
		}
		if tt.shortHeading != "" && d.Heading() != tt.shortHeading {
			t.Errorf("%q: heading %q, want %q", tt.name, d.Heading(), tt.shortHeading)
		}
	}
	if got := tests[0].name.With(12.5); got != (Figure{Name: FigureTPM, Value: 12.5, Unit: "tx/min"}) {
		t.Errorf("With: %+v", got)
	}
}

func TestCheckFigures(t *testing.T) {
	tests := []struct {
		in   Recorded
		figs []Figure
		says string
	}{
		{InStep, []Figure{FigureTPM.With(1), FigureNOPM.With(2)}, ""},
		{InSecond, []Figure{{Name: FigureTPS, Value: 3}}, ""},
		{InStep, []Figure{{Name: "tmp", Value: 1, Unit: "tx/min"}}, `"tmp" is not in the figure catalogue`},
		{InRun, []Figure{FigureTPM.With(1)}, `"tpm" is not recorded there by the catalogue`},
		{InStep, []Figure{{Name: FigureIOPS, Value: 1, Unit: "IOPS"}}, `"iops" is in "IOPS", the catalogue's unit is "I/O per s"`},
		// A ceiling is in the unit of the figure it bounds.
		{InRun, []Figure{{Name: FigureCeiling, Value: 25, Unit: "ms"}}, ""},
	}
	for _, tt := range tests {
		err := CheckFigures(tt.in, tt.figs...)
		if (tt.says == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.says)) {
			t.Errorf("%+v: %v, want %q", tt.figs, err, tt.says)
		}
	}
}

// TestEveryFigureNamedInTheTreeIsDefined reads dbio's source (no test
// file) for every figure named by a constant or a literal: a FigureName
// constant, a conversion to FigureName, a Figure's Name, a step's Figure
// asked by name, analysis.Value's name. Each must be in the catalogue.
func TestEveryFigureNamedInTheTreeIsDefined(t *testing.T) {
	fset := token.NewFileSet()
	named := map[string][]string{}
	for _, top := range []string{"cmd", "internal", "scripts"} {
		err := filepath.WalkDir(filepath.Join(moduleRoot, top), func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && e.Name() == "testdata" {
				return filepath.SkipDir
			}
			if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			for _, lit := range figureLiterals(f) {
				pos := fset.Position(lit.Pos())
				name, _ := strconv.Unquote(lit.Value)
				named[name] = append(named[name], pos.String())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(named) < len(catalogue)/2 {
		t.Fatalf("only %d figure names found in the tree: the scan misses them", len(named))
	}
	for name, where := range named {
		if !FigureName(name).Defined() {
			t.Errorf("%s names the figure %q, which the catalogue does not define", strings.Join(where, ", "), name)
		}
	}
}

// figureLiterals are the string literals f gives as figure names.
func figureLiterals(f *ast.File) []*ast.BasicLit {
	var out []*ast.BasicLit
	add := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			out = append(out, lit)
		}
	}
	figureType := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name == "FigureName"
		case *ast.SelectorExpr:
			return x.Sel.Name == "FigureName"
		}
		return false
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ValueSpec:
			if x.Type != nil && figureType(x.Type) {
				for _, v := range x.Values {
					add(v)
				}
			}
		case *ast.CallExpr:
			switch fn := x.Fun.(type) {
			case *ast.Ident:
				if fn.Name == "FigureName" && len(x.Args) == 1 {
					add(x.Args[0])
				}
				if fn.Name == "Value" && len(x.Args) == 2 {
					add(x.Args[1])
				}
			case *ast.SelectorExpr:
				switch {
				case fn.Sel.Name == "FigureName" && len(x.Args) == 1, fn.Sel.Name == "Figure" && len(x.Args) == 1:
					add(x.Args[0])
				case fn.Sel.Name == "Value" && len(x.Args) == 2:
					if pkg, ok := fn.X.(*ast.Ident); ok && pkg.Name == "analysis" {
						add(x.Args[1])
					}
				}
			}
		case *ast.CompositeLit:
			var typ string
			switch ct := x.Type.(type) {
			case *ast.Ident:
				typ = ct.Name
			case *ast.SelectorExpr:
				typ = ct.Sel.Name
			}
			if typ != "Figure" {
				return true
			}
			for _, el := range x.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
						add(kv.Value)
					}
				}
			}
		}
		return true
	})
	return out
}

// TestRecordedFiguresAreDefined reads every results directory kept in the
// tree's test data (runs of real engines and fio, their repeat sets and
// suites, fleets' hosts): each figure of a step, of a run and of a fleet
// host's part of a step must be in the catalogue, where the catalogue
// records it. Their units are those of the dbio that recorded them.
func TestRecordedFiguresAreDefined(t *testing.T) {
	files := 0
	err := filepath.WalkDir(moduleRoot, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == ".git" {
			return filepath.SkipDir
		}
		in := map[string]Recorded{"summary.json": InStep, "run.json": InRun}[e.Name()]
		if e.IsDir() || in == 0 || !strings.Contains(filepath.ToSlash(path), "/testdata/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var doc any
		if json.Unmarshal(b, &doc) != nil {
			return nil // a test's damaged record, on purpose
		}
		files++
		var names []FigureName
		recordedFigureNames(doc, &names)
		for _, n := range names {
			if d, ok := n.lookup(); !ok || d.In&in == 0 {
				t.Errorf("%s records the figure %q, which the catalogue does not define there", path, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d records found in the test data", files)
	}
}

// recordedFigureNames collects the names of every list of figures in a
// record: the step's or run's own, and those in its detail (a fleet's
// hosts).
func recordedFigureNames(v any, out *[]FigureName) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if figs, ok := e.([]any); ok && k == "figures" {
				for _, f := range figs {
					if m, ok := f.(map[string]any); ok {
						if n, ok := m["name"].(string); ok && !slices.Contains(*out, FigureName(n)) {
							*out = append(*out, FigureName(n))
						}
					}
				}
			}
			recordedFigureNames(e, out)
		}
	case []any:
		for _, e := range x {
			recordedFigureNames(e, out)
		}
	}
}
