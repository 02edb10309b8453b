package importrules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// hostRoots are the functions that name the running system's /proc, /sys
// and /etc, by the package that declares them. Only cmd may call them:
// below it the roots arrive as parameters (docs/ARCHITECTURE.md, "No
// process state below cmd").
func hostRoots(module string) map[string]string {
	return map[string]string{
		module + "/internal/target":    "HostFS",
		module + "/internal/telemetry": "HostFS",
	}
}

// TestHostRootsOnlyFromCmd fails when a non-test file outside cmd/ calls a
// function that names the running system's roots.
func TestHostRootsOnlyFromCmd(t *testing.T) {
	root, module, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := sourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, rel := range files {
		if strings.HasPrefix(rel, "cmd/") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", rel, err)
		}
		checked++
		for _, call := range hostRootCalls(fset, f, module+"/"+path.Dir(rel), hostRoots(module)) {
			t.Errorf("%s: %s names the running system's roots below cmd: take a target.SysFS or telemetry.FS from the caller instead", rel, call)
		}
	}
	if checked == 0 {
		t.Fatal("no file checked: the walk is broken")
	}
}

// hostRootCalls returns "line N: pkg.Func()" for each call in f, a file of
// the package pkgPath, of one of roots (package path -> function name).
func hostRootCalls(fset *token.FileSet, f *ast.File, pkgPath string, roots map[string]string) []string {
	imported := map[string]string{} // local name -> package path
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		imported[name] = p
	}
	var calls []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		var pkg, fn string
		switch fun := call.Fun.(type) {
		case *ast.SelectorExpr:
			if x, ok := fun.X.(*ast.Ident); ok && imported[x.Name] != "" {
				pkg, fn = imported[x.Name], fun.Sel.Name
			}
		case *ast.Ident:
			pkg, fn = pkgPath, fun.Name
		}
		if pkg != "" && roots[pkg] == fn {
			calls = append(calls, fmt.Sprintf("line %d: %s.%s()", fset.Position(call.Pos()).Line, path.Base(pkg), fn))
		}
		return true
	})
	return calls
}

// TestHostRootCalls sees calls through an import, a renamed import and from
// inside the declaring package, and nothing else of the same name.
func TestHostRootCalls(t *testing.T) {
	roots := hostRoots("dbio")
	for _, tt := range []struct {
		name, pkg, src string
		want           []string
	}{
		{
			name: "through imports",
			pkg:  "dbio/internal/runner",
			src: `package runner
import (
	"dbio/internal/target"
	tm "dbio/internal/telemetry"
)
func f() {
	_ = target.HostFS()
	_ = tm.HostFS()
}`,
			want: []string{"line 7: target.HostFS()", "line 8: telemetry.HostFS()"},
		},
		{
			name: "inside the declaring package",
			pkg:  "dbio/internal/target",
			src:  "package target\nfunc f() { _ = HostFS() }\n",
			want: []string{"line 2: target.HostFS()"},
		},
		{
			name: "other functions, fields and packages of the same name",
			pkg:  "dbio/internal/runner",
			src: `package runner
import (
	"dbio/internal/target"
	"example.com/other/target2"
)
type env struct{ HostFS func() int }
func HostFS() int { return 0 }
func f(e env) {
	_ = target.Open
	_ = target2.HostFS()
	_ = e.HostFS()
	_ = HostFS()
}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", tt.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := hostRootCalls(fset, f, tt.pkg, roots)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("hostRootCalls = %q, want %q", got, tt.want)
			}
		})
	}
}
