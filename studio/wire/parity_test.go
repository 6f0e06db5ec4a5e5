package wire_test

import (
	"encoding"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// The parity tests hold the published types of this package equal to the
// daemon's own (table.State, round.View, the event bodies, the
// settlement...), which change for the engine's sake: a field added to
// table.State and not to State (with its mapping, stateOf, and its doc
// comment, so that docs/asyncapi.yaml lists it) fails here, naming the
// field, and so does a field of the wire types with no source in the
// daemon's. A difference that is meant (a field internal to the daemon,
// a list the contract always sends) is listed in knownDifferences with
// why.

// jshape is the JSON a Go type encodes to, as encoding/json writes it.
type jshape struct {
	Type   string             // object, array, map, string, integer, number, boolean, any
	Fields map[string]*jfield // an object's fields by JSON name
	Elem   *jshape            // an array's or a map's values
	Go     string             // the Go type, for messages
}

// jfield is one field of an object.
type jfield struct {
	Shape    *jshape
	Optional bool // omitempty or omitzero: absent when zero
	GoName   string
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	jsonMarshal  = reflect.TypeFor[json.Marshaler]()
	textMarshal  = reflect.TypeFor[encoding.TextMarshaler]()
	rawJSONBytes = reflect.TypeFor[json.RawMessage]()
)

// shapeOf is t's JSON shape. A struct without any json tag is the
// daemon's plain Go type (table.CrowdPrompt): its fields are named in
// snake case, as the wire names them.
func shapeOf(t reflect.Type) *jshape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := &jshape{Go: t.String()}
	switch {
	case t == timeType:
		s.Type = "string"
		return s
	case t == rawJSONBytes || t.Kind() == reflect.Interface:
		s.Type = "any"
		return s
	case t.Implements(jsonMarshal) || reflect.PointerTo(t).Implements(jsonMarshal):
		// Its own encoding: what its zero value looks like.
		b, err := json.Marshal(reflect.New(t).Interface())
		switch {
		case err != nil || len(b) == 0:
			s.Type = "any"
		case b[0] == '[':
			s.Type, s.Elem = "array", &jshape{Type: "string", Go: "string"}
		case b[0] == '{':
			s.Type = "any"
		case b[0] == '"':
			s.Type = "string"
		default:
			s.Type = "any"
		}
		return s
	case t.Implements(textMarshal) || reflect.PointerTo(t).Implements(textMarshal):
		s.Type = "string"
		return s
	}
	switch t.Kind() {
	case reflect.String:
		s.Type = "string"
	case reflect.Bool:
		s.Type = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s.Type = "integer"
	case reflect.Float32, reflect.Float64:
		s.Type = "number"
	case reflect.Slice, reflect.Array:
		if e := t.Elem(); e.Kind() == reflect.Uint8 && !e.Implements(jsonMarshal) && !e.Implements(textMarshal) {
			s.Type = "string" // base64
			return s
		}
		s.Type, s.Elem = "array", shapeOf(t.Elem())
	case reflect.Map:
		s.Type, s.Elem = "map", shapeOf(t.Elem())
	case reflect.Struct:
		s.Type, s.Fields = "object", map[string]*jfield{}
		addFields(s, t, !hasJSONTags(t))
	default:
		s.Type = "any"
	}
	return s
}

func hasJSONTags(t reflect.Type) bool {
	for i := range t.NumField() {
		if _, ok := t.Field(i).Tag.Lookup("json"); ok {
			return true
		}
	}
	return false
}

// addFields adds t's fields to s as encoding/json writes them: unexported
// and `json:"-"` fields skipped, untagged embedded structs flattened.
func addFields(s *jshape, t reflect.Type, snakeNames bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, tagged := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		if f.Anonymous && !tagged {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(s, ft, snakeNames)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
			if snakeNames {
				name = snake(f.Name)
			}
		}
		s.Fields[name] = &jfield{Shape: shapeOf(f.Type), GoName: f.Name,
			Optional: strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")}
	}
}

// snake is a Go name in snake case: PairValue is pair_value.
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// parityPair is one of the daemon's types and the wire type it is
// published as. Path names it in the messages and in knownDifferences.
type parityPair struct {
	Path          string
	Daemon, Wire  reflect.Type
	IgnoreOptions bool // the daemon's type is a union of several kinds (round.Note)
}

// parityPairs are every published type: the state, every event body, the
// envelope. The round's events are one packed type (round.Note) for many
// kinds; it is held against the union of their wire types. Reply and
// Status are this package's own types (the link builds them), nothing to
// hold them to.
var parityPairs = []parityPair{
	{Path: "state", Daemon: reflect.TypeFor[table.State](), Wire: reflect.TypeFor[wire.State]()},
	{Path: "envelope", Daemon: reflect.TypeFor[table.Event](), Wire: reflect.TypeFor[wire.Event]()},
	{Path: "phase", Daemon: reflect.TypeFor[table.PhaseChanged](), Wire: reflect.TypeFor[wire.Phase]()},
	{Path: "alarm", Daemon: reflect.TypeFor[table.Alarm](), Wire: reflect.TypeFor[wire.Alarm]()},
	{Path: "paused", Daemon: reflect.TypeFor[table.Paused](), Wire: reflect.TypeFor[wire.Paused]()},
	{Path: "resumed", Daemon: reflect.TypeFor[table.Resumed](), Wire: reflect.TypeFor[wire.Resumed]()},
	{Path: "cut_card", Daemon: reflect.TypeFor[table.CutCard](), Wire: reflect.TypeFor[wire.CutCard]()},
	{Path: "shoe_in_play", Daemon: reflect.TypeFor[table.ShoeInPlay](), Wire: reflect.TypeFor[wire.ShoeInPlay]()},
	{Path: "burned", Daemon: reflect.TypeFor[table.Burned](), Wire: reflect.TypeFor[wire.Burned]()},
	{Path: "round_settled", Daemon: reflect.TypeFor[round.Settlement](), Wire: reflect.TypeFor[wire.RoundSettled]()},
	{Path: "round_void", Daemon: reflect.TypeFor[round.Settlement](), Wire: reflect.TypeFor[wire.RoundVoid]()},
	{Path: "crowd_prompt", Daemon: reflect.TypeFor[table.CrowdPrompt](), Wire: reflect.TypeFor[wire.CrowdPrompt]()},
	{Path: "settlement_chunk", Daemon: reflect.TypeFor[table.SettlementChunk](), Wire: reflect.TypeFor[wire.SettlementChunk]()},
	{Path: "round_note", Daemon: reflect.TypeFor[round.Note](), IgnoreOptions: true},
}

// roundKinds are the wire types of the kinds made from round.Note.
var roundKinds = []any{wire.RoundStarted{}, wire.CardDealt{}, wire.InsuranceOffered{}, wire.InsuranceAnswered{},
	wire.Peeked{}, wire.DecisionRequested{}, wire.DecisionMade{}, wire.HandDone{}, wire.HoleRevealed{}, wire.DealerDone{}}

// knownDifferences are the differences between the daemon's types and the
// wire's that are meant, by path, with why. Anything else fails, and so
// does an entry here that no longer matches a difference.
var knownDifferences = map[string]string{
	// Lists: the contract sends [] for none (Version 2), the daemon's
	// types leave them out.
	"state.alarms":               "a list: [] when none on the wire (Version 2)",
	"state.round.seats[].hands":  "a list: [] when none on the wire (Version 2)",
	"round_settled.seats[].side": "a list: [] when none on the wire (Version 2)",
	"round_void.seats[].side":    "a list: [] when none on the wire (Version 2)",
	"state.shoe.burn_pending":    "the wire always sends it (0 when none), as it did before the daemon's type left it out",
	"state.timer.stopped":        "the wire always sends it (false while the countdown runs)",
	"shoe_in_play.burn":          "the wire always sends it (0 for a game that burns none)",
	"state.shoe.booked":          "internal: how many cards the integrity book holds for the shoe, the daemon's own check (tablectl status over the socket shows it); a backend has `dealt`",
	"envelope.body":              "the wire names the body's kind (`kind`) and sends it as `data`",
	"envelope.kind":              "the body's Kind(), not a field",
	"envelope.data":              "the body, mapped onto its wire type",
	"envelope.round":             "the daemon's Event is not JSON itself; the wire leaves round out between rounds",
	"envelope.schema":            "the contract's version, the wire's own",
	"round_settled.void":         "the kind says it: round_settled, or round_void",
	"round_settled.reason":       "only a void has a reason (round_void.reason)",
	"round_void.void":            "the kind says it: round_void",
	"round_void.reason":          "a void always has its supervisor's reason",
	"round_void.net":             "every net of a void is 0",
	"round_void.rounding":        "nothing is paid in a void",
	"round_note.flag":            "published under its meaning: insurance_answered.take, peeked.blackjack",
	"round_note.take":            "round.Note.Flag of an insurance answer",
	"round_note.blackjack":       "round.Note.Flag of a peek",
	"round_note.outcome":         "a hand's outcome goes out with the settlement (round_settled), not on hand_done",
	"round_note.player":          "round.Event.Player(): the id of the player in slot Note.Who",
}

// parityDiffs lists the differences between the shapes of one pair.
func parityDiffs(p parityPair) []diff {
	d, w := shapeOf(p.Daemon), &jshape{}
	if p.Wire != nil {
		w = shapeOf(p.Wire)
	} else {
		w = unionShape(roundKinds)
	}
	var out []diff
	compareShapes(p.Path, p.Daemon.String(), d, w, p.IgnoreOptions, &out)
	return out
}

// unionShape is an object with every field of the types' objects.
func unionShape(vs []any) *jshape {
	u := &jshape{Type: "object", Fields: map[string]*jfield{}, Go: "the round kinds"}
	for _, v := range vs {
		for name, f := range shapeOf(reflect.TypeOf(v)).Fields {
			u.Fields[name] = f
		}
	}
	return u
}

// diff is one difference, at a path.
type diff struct{ Path, Text string }

func compareShapes(path, daemonGo string, d, w *jshape, ignoreOptions bool, out *[]diff) {
	if d.Type != w.Type && d.Type != "any" && w.Type != "any" {
		*out = append(*out, diff{path, fmt.Sprintf("%s: the daemon's %s is a JSON %s, the wire's %s a %s", path, d.Go, d.Type, w.Go, w.Type)})
		return
	}
	switch d.Type {
	case "array", "map":
		if d.Elem != nil && w.Elem != nil {
			compareShapes(path+"[]", daemonGo, d.Elem, w.Elem, ignoreOptions, out)
		}
	case "object":
		for _, name := range slices.Sorted(maps.Keys(d.Fields)) {
			df := d.Fields[name]
			wf, ok := w.Fields[name]
			at := path + "." + name
			if !ok {
				*out = append(*out, diff{at, fmt.Sprintf("%s: %s.%s (json %q, %s) is not in the wire's %s: add it there (a doc comment saying what it means to a backend, its mapping, go test ./studio/wire -update), or list it in knownDifferences with why it is not published",
					at, d.Go, df.GoName, name, df.Shape.Type, w.Go)})
				continue
			}
			if !ignoreOptions && df.Optional != wf.Optional {
				*out = append(*out, diff{at, fmt.Sprintf("%s: %s.%s is %s, the wire's %s.%s %s", at, d.Go, df.GoName, optWord(df.Optional), w.Go, wf.GoName, optWord(wf.Optional))})
			}
			compareShapes(at, daemonGo, df.Shape, wf.Shape, ignoreOptions, out)
		}
		for _, name := range slices.Sorted(maps.Keys(w.Fields)) {
			if _, ok := d.Fields[name]; !ok {
				at := path + "." + name
				*out = append(*out, diff{at, fmt.Sprintf("%s: the wire's %s.%s (json %q) has no source in the daemon's %s: the daemon never sends it",
					at, w.Go, w.Fields[name].GoName, name, d.Go)})
			}
		}
	}
}

func optWord(optional bool) string {
	if optional {
		return "optional (omitempty)"
	}
	return "always sent"
}

// TestWireParity: every published type's fields, with their JSON types
// and whether they may be absent, are the daemon's, but for the known
// differences; a field added on one side only fails here by name.
func TestWireParity(t *testing.T) {
	matched := map[string]bool{}
	for _, p := range parityPairs {
		for _, d := range parityDiffs(p) {
			if why, ok := knownDifferences[d.Path]; ok {
				matched[d.Path] = true
				t.Logf("known: %s (%s)", d.Text, why)
				continue
			}
			t.Errorf("%s", d.Text)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(knownDifferences)) {
		assert.True(t, matched[path], "knownDifferences[%q] matches no difference any more: remove it", path)
	}
}

// TestWireParityPairsCoverTheKinds: every kind of the contract has its
// daemon type in parityPairs (the round's kinds through round_note).
func TestWireParityPairsCoverTheKinds(t *testing.T) {
	covered := map[string]bool{}
	for _, p := range parityPairs {
		covered[p.Path] = true
	}
	for _, v := range roundKinds {
		for _, k := range wire.Kinds {
			if reflect.TypeOf(k.Data) == reflect.TypeOf(v) {
				covered[k.Kind] = true
			}
		}
	}
	for _, k := range wire.Kinds {
		assert.True(t, covered[k.Kind], "kind %s has no parity pair", k.Kind)
	}
}

// TestWireParityCatchesADroppedField is the parity check on a mirror
// with a field taken out, and on a daemon's type with one more: both
// fail by name.
func TestWireParityCatchesADroppedField(t *testing.T) {
	type mirror struct {
		Seq  uint64 `json:"seq"`
		Game string `json:"game"`
	}
	type daemon struct {
		Seq             uint64   `json:"seq"`
		Game            string   `json:"game"`
		MisreadsPending int      `json:"misreads_pending,omitempty"`
		SetAside        []string `json:"set_aside,omitempty"`
	}
	diffs := parityDiffs(parityPair{Path: "x", Daemon: reflect.TypeFor[daemon](), Wire: reflect.TypeFor[mirror]()})
	var paths []string
	for _, d := range diffs {
		paths = append(paths, d.Path)
	}
	assert.Equal(t, []string{"x.misreads_pending", "x.set_aside"}, paths)
	diffs = parityDiffs(parityPair{Path: "x", Daemon: reflect.TypeFor[mirror](), Wire: reflect.TypeFor[daemon]()})
	require.Len(t, diffs, 2)
	assert.Contains(t, diffs[0].Text, "the daemon never sends it")
}

// fill sets every exported field of v (a pointer) to a value that is not
// zero: every optional field of the wire's form must then be there.
func fill(v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeFor[card.Card]():
		v.Set(reflect.ValueOf(card.MustParse("Qh")))
		return
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(t0))
		return
	case v.Type() == reflect.TypeFor[round.Options]():
		v.Set(reflect.ValueOf(^round.Options(0))) // every action
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

// missingKeys lists the fields of shape s absent from the JSON value v.
func missingKeys(path string, s *jshape, v any, out *[]string) {
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			*out = append(*out, path+" (not an object)")
			return
		}
		for _, name := range slices.Sorted(maps.Keys(s.Fields)) {
			fv, ok := m[name]
			if !ok {
				*out = append(*out, path+"."+name)
				continue
			}
			missingKeys(path+"."+name, s.Fields[name].Shape, fv, out)
		}
	case "array":
		if a, ok := v.([]any); ok && len(a) > 0 {
			missingKeys(path+"[]", s.Elem, a[0], out)
		} else if !ok || len(a) == 0 {
			*out = append(*out, path+"[] (empty)")
		}
	}
}

// TestWireMappingCarriesEveryField: a daemon's value with every field set
// comes out with every field of its wire type: a field added to both
// types but not to the mapping (stateOf...) fails here.
func TestWireMappingCarriesEveryField(t *testing.T) {
	filled := func(p any) any {
		fill(reflect.ValueOf(p).Elem())
		return reflect.ValueOf(p).Elem().Interface()
	}
	st := filled(&table.State{}).(table.State)
	settled := filled(&round.Settlement{}).(round.Settlement)
	settled.Void = false
	void := filled(&round.Settlement{}).(round.Settlement)
	cases := []struct {
		body table.Body
		wire any
	}{
		{&st, wire.State{}},
		{filled(&table.PhaseChanged{}).(table.PhaseChanged), wire.Phase{}},
		{filled(&table.Alarm{}).(table.Alarm), wire.Alarm{}},
		{filled(&table.Paused{}).(table.Paused), wire.Paused{}},
		{filled(&table.Resumed{}).(table.Resumed), wire.Resumed{}},
		{filled(&table.CutCard{}).(table.CutCard), wire.CutCard{}},
		{filled(&table.ShoeInPlay{}).(table.ShoeInPlay), wire.ShoeInPlay{}},
		{filled(&table.Burned{}).(table.Burned), wire.Burned{}},
		{filled(&table.CrowdPrompt{}).(table.CrowdPrompt), wire.CrowdPrompt{}},
		{filled(&table.SettlementChunk{}).(table.SettlementChunk), wire.SettlementChunk{}},
		{round.NewEvent(round.Note{Type: round.EvSettled}, "", &settled), wire.RoundSettled{}},
		{round.NewEvent(round.Note{Type: round.EvSettled}, "", &void), wire.RoundVoid{}},
	}
	for _, tc := range cases {
		_, data, ok := wire.Data(tc.body)
		require.True(t, ok, "%T", tc.body)
		require.IsType(t, tc.wire, data)
		b, err := json.Marshal(data)
		require.NoError(t, err)
		var v any
		require.NoError(t, json.Unmarshal(b, &v))
		var missing []string
		missingKeys(reflect.TypeOf(tc.wire).Name(), shapeOf(reflect.TypeOf(tc.wire)), v, &missing)
		assert.Empty(t, missing, "%T filled in every field maps onto %T without these (the mapping forgets them): %s", tc.body, tc.wire, b)
	}
}

// TestPausedStateFitsTheContract: a state paused for two reasons, with
// two cards waiting for a correction and three set aside, goes out with
// them and fits the state message (its schema allows no other field).
func TestPausedStateFitsTheContract(t *testing.T) {
	c := loadContract(t)
	st := &table.State{Seq: 40, Table: "t1", Game: "000", Phase: table.PhasePaused, Paused: true,
		PauseReason: "misread #05: card misread", Round: round.View{ID: "r1", Phase: "dealing", Next: "stop: 2 cards not read"},
		Shoe:         table.ShoeState{ID: "S1", Decks: 8, Dealt: 9, Booked: 9},
		PauseReasons: []table.PauseReason{table.PauseUnexpectedCard, table.PauseMisread},
		Misread:      "misread #05: card misread", MisreadsPending: 2, SetAside: []string{"7h", "2c", "Ks"},
		Alarms: []table.Alarm{{Code: "shoe.misread", Message: "misread #05: card misread", Pauses: true}},
		Timer:  &table.TimerView{Name: "decision", LeftMS: 4000, Stopped: true}}
	b, err := wire.Encode(table.Event{Time: t0, Table: "t1", Round: "r1", Body: st})
	require.NoError(t, err)
	require.NoError(t, c.Validate("state", b), "%s", b)
	var env struct {
		Data map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(b, &env))
	assert.Equal(t, []any{"unexpected_card", "misread"}, env.Data["pause_reasons"])
	assert.Equal(t, "misread #05: card misread", env.Data["misread"])
	assert.EqualValues(t, 2, env.Data["misreads_pending"])
	assert.Equal(t, []any{"7h", "2c", "Ks"}, env.Data["set_aside"])
	assert.NotContains(t, env.Data["shoe"], "booked", "internal to the daemon")

	// Not paused: none of them, as before 2.1.0.
	b, err = wire.Encode(table.Event{Time: t0, Table: "t1", Body: &table.State{Table: "t1", Game: "000", Phase: table.PhaseBetting, Shoe: table.ShoeState{Decks: 8}}})
	require.NoError(t, err)
	require.NoError(t, c.Validate("state", b), "%s", b)
	for _, k := range []string{"pause_reasons", "misread", "misreads_pending", "set_aside"} {
		assert.NotContains(t, string(b), `"`+k+`"`)
	}
}

// typedConsts are the string constants of the named type typ declared in
// the Go files of dir (not the tests'), as the daemon's code has them.
func typedConsts(t *testing.T, dir, typ string) []string {
	t.Helper()
	fset := token.NewFileSet()
	// The files one by one: parser.ParseDir is deprecated (it ignores
	// build tags, which these packages do not use either).
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var out []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						u, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						out = append(out, u)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// enumOf is the enum tag of a wire type's field, sorted.
func enumOf(t *testing.T, typ reflect.Type, field string) []string {
	t.Helper()
	f, ok := typ.FieldByName(field)
	require.True(t, ok, "%s.%s", typ, field)
	vals := strings.Split(f.Tag.Get("enum"), ",")
	slices.Sort(vals)
	return vals
}

// namesOf are the names String gives a small enum's values from 1 until
// it names no more (unknown, Action(n)...).
func namesOf[T ~uint8](t *testing.T, name func(T) string) []string {
	t.Helper()
	var out []string
	for v := T(1); v < 64; v++ {
		n := name(v)
		if n == "" || n == "unknown" || strings.Contains(n, "(") {
			break
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// TestWireEnumsHoldTheDaemonsValues: the values the contract enumerates
// are every value the daemon can send (a new phase, timer, outcome or
// action not in the enum would fail every backend that validates), and
// no more.
func TestWireEnumsHoldTheDaemonsValues(t *testing.T) {
	phases := typedConsts(t, "../../table", "Phase")
	require.NotEmpty(t, phases)
	assert.Equal(t, phases, enumOf(t, reflect.TypeFor[wire.State](), "Phase"), "the state's phases")
	assert.Equal(t, phases, enumOf(t, reflect.TypeFor[wire.Phase](), "Phase"), "the phase event's phases")
	timers := typedConsts(t, "../../table", "TimerName")
	require.NotEmpty(t, timers)
	assert.Equal(t, timers, enumOf(t, reflect.TypeFor[wire.Timer](), "Name"), "the timers")
	outcomes := namesOf(t, round.Outcome.String)
	assert.Equal(t, outcomes, enumOf(t, reflect.TypeFor[wire.HandResult](), "Outcome"), "a hand's outcomes")
	assert.Equal(t, outcomes, enumOf(t, reflect.TypeFor[wire.PlayerNet](), "Outcomes"), "a crowd player's outcomes")
	actions := namesOf(t, round.Action.String)
	for _, f := range []struct {
		typ   reflect.Type
		field string
	}{{reflect.TypeFor[wire.DecisionRequested](), "Options"}, {reflect.TypeFor[wire.DecisionMade](), "Action"},
		{reflect.TypeFor[wire.Situation](), "Options"}} {
		assert.Equal(t, actions, enumOf(t, f.typ, f.field), "%s.%s", f.typ, f.field)
	}
}
