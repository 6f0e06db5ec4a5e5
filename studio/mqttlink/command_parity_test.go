package mqttlink

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/studio/wire/wiretest"
)

// The command parity test holds the decoder (wireCommand and the checks
// of DecodeCommand) to the command schemas of docs/asyncapi.yaml, which
// are generated from studio/wire's command types: a field the contract
// lists and the decoder refuses, a field the decoder takes and the
// contract does not list, or a field the contract calls optional and the
// decoder requires fails here by name.

// commandFieldKnown are the differences that are meant, with why.
var commandFieldKnown = map[string]string{
	// One schema serves pause, resume and void; its description says a
	// void needs a reason, which the schema cannot say for one type only.
	"void.reason": "required for a void only (the schema's description says so)",
	// token: the old supervisor token, refused with a reason that says
	// commands are now signed.
	"token": "the old supervisor token: refused with a reason that says commands are signed",
}

// jsonFields are a struct type's JSON field names and whether each may
// be absent (omitempty).
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out[name] = strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
	}
	return out
}

// sampleValue is a valid value of a wire command field, from its type and
// tags.
func sampleValue(f reflect.StructField) any {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "schema":
		return wire.Version
	case "id":
		return "parity-1"
	case "card":
		return "Qh"
	case "sig":
		return base64.StdEncoding.EncodeToString(make([]byte, 64))
	case "ts":
		return 1
	case "player":
		return "p1"
	}
	if e, ok := f.Tag.Lookup("enum"); ok {
		v, _, _ := strings.Cut(e, ",")
		if f.Type.Kind() == reflect.String {
			return v
		}
		n, _ := strconv.Atoi(v)
		return n
	}
	t := f.Type
	switch t.Kind() {
	case reflect.String:
		return "x"
	case reflect.Bool:
		return true
	case reflect.Int, reflect.Int64, reflect.Uint64:
		if m, ok := f.Tag.Lookup("minimum"); ok {
			n, _ := strconv.Atoi(m)
			return max(n, 1)
		}
		return 1
	case reflect.Map:
		return map[string]any{"perfect_pairs": 100}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return []any{samplePayload(t.Elem(), "", false)}
		}
		return []any{}
	}
	panic("no sample for " + t.String())
}

// samplePayload is a payload of command type t: every field, or only the
// required ones; typ is the `type` when t serves several.
func samplePayload(t reflect.Type, typ string, requiredOnly bool) map[string]any {
	opt := jsonFields(t)
	out := map[string]any{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if requiredOnly && opt[name] {
			continue
		}
		out[name] = sampleValue(f)
		if name == "type" && typ != "" {
			out[name] = typ
		}
	}
	return out
}

// commandTypes are the `type` values a command type serves.
func commandTypes(t reflect.Type) []string {
	f, ok := t.FieldByName("Type")
	if !ok {
		return nil
	}
	return strings.Split(f.Tag.Get("enum"), ",")
}

func decodeMap(t *testing.T, m map[string]any) error {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	_, err = DecodeCommand(b)
	return err
}

// TestCommandParity: for every command of the contract, a payload with
// every field it lists is decoded and fits its schema; one with only the
// required fields is decoded; one without a required field is refused;
// and every field the decoder knows that the command's schema does not
// list is refused. A bet's and a batch entry's fields are the contract's.
func TestCommandParity(t *testing.T) {
	contract, err := wiretest.Load("../../docs/asyncapi.yaml")
	require.NoError(t, err)
	decoderFields := jsonFields(reflect.TypeFor[wireCommand]())
	used := map[string]bool{}
	known := map[string]bool{}
	for _, c := range wire.Commands {
		ct := reflect.TypeOf(c.Value)
		fields := jsonFields(ct)
		for name := range fields {
			used[name] = true
		}
		for _, typ := range commandTypes(ct) {
			t.Run(typ, func(t *testing.T) {
				full := samplePayload(ct, typ, false)
				b, err := json.Marshal(full)
				require.NoError(t, err)
				assert.NoError(t, contract.Validate("commands", b), "the sample fits the schema: %s", b)
				assert.NoError(t, decodeMap(t, full), "a %s with every field the contract lists is refused: %s", typ, b)

				for i := range ct.NumField() {
					f := ct.Field(i)
					name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
					e, ok := f.Tag.Lookup("enum")
					if !ok || name == "type" || f.Type.Kind() != reflect.String {
						continue
					}
					for _, v := range strings.Split(e, ",") {
						one := maps.Clone(full)
						one[name] = v
						assert.NoError(t, decodeMap(t, one), "a %s with %s %q, a value the contract lists, is refused", typ, name, v)
					}
					one := maps.Clone(full)
					one[name] = "not-in-the-contract"
					assert.Error(t, decodeMap(t, one), "a %s with %s not in the contract's enum is accepted", typ, name)
				}

				minimal := samplePayload(ct, typ, true)
				for name, optional := range fields {
					if optional && knownCommandDiff(typ+"."+name, known) {
						minimal[name] = full[name]
					}
				}
				assert.NoError(t, decodeMap(t, minimal), "a %s with only the fields the contract requires is refused", typ)

				for _, name := range slices.Sorted(maps.Keys(fields)) {
					if fields[name] || name == "type" {
						continue
					}
					without := maps.Clone(minimal)
					delete(without, name)
					if err := decodeMap(t, without); err == nil && !knownCommandDiff(typ+"."+name, known) {
						t.Errorf("%s without %q is accepted, the contract requires it", typ, name)
					}
				}
				for _, name := range slices.Sorted(maps.Keys(decoderFields)) {
					if _, listed := fields[name]; listed {
						continue
					}
					extra := maps.Clone(full)
					extra[name] = decoderSample(name)
					if err := decodeMap(t, extra); err == nil {
						t.Errorf("%s with %q is accepted: the contract does not list that field for it", typ, name)
					}
				}
			})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(decoderFields)) {
		if !used[name] && !knownCommandDiff(name, known) {
			t.Errorf("the decoder reads %q, which no command of the contract has", name)
		}
	}
	assert.Equal(t, keysOf(jsonFields(reflect.TypeFor[wire.Bet]())), keysOf(jsonFields(reflect.TypeFor[wireBet]())), "a bet's fields")
	assert.Equal(t, keysOf(jsonFields(reflect.TypeFor[wire.DecisionEntry]())), keysOf(jsonFields(reflect.TypeFor[wireEntry]())), "a batch entry's fields")
	enum := func(typ reflect.Type, field string) []string {
		f, _ := typ.FieldByName(field)
		return slices.Sorted(slices.Values(strings.Split(f.Tag.Get("enum"), ",")))
	}
	assert.Equal(t, enum(reflect.TypeFor[wire.DecisionCommand](), "Action"), slices.Sorted(maps.Keys(decisionActions)), "a decision's actions")
	assert.Equal(t, enum(reflect.TypeFor[wire.DecisionEntry](), "Action"), slices.Sorted(maps.Keys(batchActions)), "a batch entry's actions")
	for name := range commandFieldKnown {
		assert.True(t, known[name], "commandFieldKnown[%q] matches no difference any more: remove it", name)
	}
}

func knownCommandDiff(key string, seen map[string]bool) bool {
	if _, ok := commandFieldKnown[key]; ok {
		seen[key] = true
		return true
	}
	return false
}

func keysOf(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// decoderSample is a value of the type the decoder reads a field as.
func decoderSample(name string) any {
	for i := range reflect.TypeFor[wireCommand]().NumField() {
		f := reflect.TypeFor[wireCommand]().Field(i)
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n != name {
			continue
		}
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.String:
			return "x"
		case reflect.Bool:
			return true
		case reflect.Slice:
			return []any{}
		default:
			return 1
		}
	}
	return nil
}
