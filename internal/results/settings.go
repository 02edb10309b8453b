package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Settings are named values as a workload records them in run.json's
// config: its own settings under its name (TPC-C's warehouses, sysbench's
// tables), its own stepping of users beside them (AS3AP's start and add).
// The workload owns their meaning, and results knows no workload, so they
// are kept as the workload wrote them, in its order, and read by name.
type Settings []Setting

// Setting is one named value. Value is what JSON holds: a string, a bool,
// a json.Number (its text as written), nil, a []any of these, or Settings.
type Setting struct {
	Name  string
	Value any
}

// SettingsOf is a workload's record (a value with JSON tags, as it would
// be written) as Settings, in the order its JSON has them; nil records
// nothing.
func SettingsOf(record any) (Settings, error) {
	if record == nil {
		return nil, nil
	}
	b, err := json.Marshal(record)
	if err != nil {
		return nil, err
	}
	var s Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%T is not a record of named values: %w", record, err)
	}
	return s, nil
}

// Lookup is the named value and whether it was recorded.
func (s Settings) Lookup(name string) (any, bool) {
	for _, e := range s {
		if e.Name == name {
			return e.Value, true
		}
	}
	return nil, false
}

// Int is the named value as a whole number, if it was recorded as one.
func (s Settings) Int(name string) (int64, bool) {
	v, _ := s.Lookup(name)
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// Bool is the named value as a boolean, if it was recorded as one.
func (s Settings) Bool(name string) (value, ok bool) {
	v, _ := s.Lookup(name)
	value, ok = v.(bool)
	return value, ok
}

// Text is the named value as text, if it was recorded as a string, a
// number or a boolean: "" otherwise.
func (s Settings) Text(name string) string {
	v, _ := s.Lookup(name)
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// MarshalJSON writes the settings as one object, in their order; nil
// Settings are null.
func (s Settings) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	var o object
	for _, e := range s {
		o.add(e.Name, e.Value)
	}
	return o.bytes()
}

// UnmarshalJSON reads an object, keeping its keys' order and its numbers'
// text; null is nil Settings.
func (s *Settings) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return errors.New("settings: more than one value")
	}
	switch v := v.(type) {
	case Settings:
		*s = v
	case nil:
		*s = nil
	default:
		return fmt.Errorf("settings: %T where an object of named values belongs", v)
	}
	return nil
}

// decodeValue reads the next JSON value: an object as Settings, numbers
// as json.Number.
func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch delim {
	case '{':
		s := Settings{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			s = append(s, Setting{Name: k.(string), Value: v})
		}
		_, err := d.Token()
		return s, err
	case '[':
		list := []any{}
		for d.More() {
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := d.Token()
		return list, err
	}
	return nil, fmt.Errorf("unexpected %v", delim)
}

// object writes a JSON object's keys in the order they are added.
type object struct {
	b   bytes.Buffer
	err error
}

func (o *object) add(key string, value any) {
	if o.err != nil {
		return
	}
	k, err := json.Marshal(key)
	if err != nil {
		o.err = err
		return
	}
	v, err := json.Marshal(value)
	if err != nil {
		o.err = fmt.Errorf("%s: %w", key, err)
		return
	}
	if o.b.Len() == 0 {
		o.b.WriteByte('{')
	} else {
		o.b.WriteByte(',')
	}
	o.b.Write(k)
	o.b.WriteByte(':')
	o.b.Write(v)
}

func (o *object) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.b.Len() == 0 {
		return []byte("{}"), nil
	}
	return append(o.b.Bytes(), '}'), nil
}
