package suite

import (
	"reflect"
	"regexp"
	"strings"

	"dbio/internal/registry"
)

// A suite file's problems are told in the words of the file, not of Go:
// what a key expects and what it was given, and for a misspelt key the
// key that was probably meant.

var cannotDecode = regexp.MustCompile(`cannot decode TOML (\w+) into .* of type (\S+)`)

// typeWords rewrites a decoder's type error ("toml: cannot decode TOML
// string into struct field suite.WorkloadDef.Users of type []int") as what
// the key expects and what it got; other messages lose only their "toml: ".
func typeWords(msg string) string {
	m := cannotDecode.FindStringSubmatch(msg)
	if m == nil {
		return strings.TrimPrefix(msg, "toml: ")
	}
	return "expected " + goTypeWords(m[2]) + ", got " + tomlTypeWords(m[1])
}

func goTypeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "[]") && strings.Contains(t, "int"):
		return "a list of whole numbers, such as [1, 2, 4]"
	case strings.HasPrefix(t, "[]"):
		return "a list, such as [\"a\", \"b\"]"
	case strings.HasPrefix(t, "map["):
		return "a table"
	case strings.Contains(t, "int"):
		return "a whole number, such as 4"
	case strings.Contains(t, "float"):
		return "a number, such as 2.5"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string in quotes, such as \"20s\""
	}
	return "a value of another kind"
}

func tomlTypeWords(t string) string {
	switch t {
	case "string":
		return "a string"
	case "integer":
		return "a whole number"
	case "float":
		return "a number with a fraction"
	case "boolean":
		return "true or false"
	case "array":
		return "a list"
	case "table", "inline-table":
		return "a table"
	}
	return t
}

// suggest names the known key of the table at path closest to the unknown
// key at its end: " (did you mean warehouses?)", or "" when none is close.
// alsoKnown are keys of the same table decoded elsewhere.
func suggest(root reflect.Type, path []string, alsoKnown ...string) string {
	if len(path) == 0 {
		return ""
	}
	t := root
	// Arrays of tables ([[runs]]) have no index in the path.
	inner := func(t reflect.Type) reflect.Type {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		return t
	}
	for _, k := range path[:len(path)-1] {
		t = inner(t)
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByTag(t, k)
			if !ok {
				return ""
			}
			t = f.Type
		default:
			return ""
		}
	}
	var keys []string
	if t = inner(t); t.Kind() == reflect.Struct {
		keys = keysOf(t)
	}
	return closest(path[len(path)-1], append(keys, alsoKnown...))
}

// keysOf are a struct's TOML keys.
func keysOf(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			keys = append(keys, keysOf(f.Type)...)
			continue
		}
		if name := tomlName(f); name != "" {
			keys = append(keys, name)
		}
	}
	return keys
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); tomlName(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tomlName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	if tag == "" {
		return f.Name
	}
	return tag
}

// closest is " (did you mean K?)" for the known key K within two edits of
// key, "" when none is.
func closest(key string, known []string) string { return registry.DidYouMean(key, known, 2) }
