package wire_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/livetable/livetable/studio/wire"
)

var update = flag.Bool("update", false, "rewrite docs/asyncapi.yaml from the wire types")

const (
	docPath  = "../../docs/asyncapi.yaml"
	headPath = "asyncapi.head.yaml"
)

// TestAsyncAPIUpToDate generates docs/asyncapi.yaml from the wire types
// and their doc comments and fails when the committed document differs:
// the contract cannot drift from the code. -update rewrites it.
func TestAsyncAPIUpToDate(t *testing.T) {
	got, err := generate()
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(docPath, got, 0o644))
		return
	}
	have, err := os.ReadFile(docPath)
	require.NoError(t, err)
	require.True(t, bytes.Equal(have, got),
		"docs/asyncapi.yaml is stale: run go test ./studio/wire -update and commit it")
}

// TestEveryFieldDocumented: the generator takes descriptions from the doc
// comments, so a field without one would go out undocumented.
func TestEveryFieldDocumented(t *testing.T) {
	docs, err := parseDocs(".")
	require.NoError(t, err)
	g := &gen{docs: docs, schemas: omap{}}
	for _, k := range wire.Kinds {
		require.NoError(t, g.define(reflect.TypeOf(k.Data)), k.Kind)
	}
	for _, c := range wire.Commands {
		require.NoError(t, g.define(reflect.TypeOf(c.Value)), c.Name)
	}
	for _, v := range []any{wire.State{}, wire.Status{}, wire.Reply{}} {
		require.NoError(t, g.define(reflect.TypeOf(v)))
	}
	_, err = g.envelope("phase", reflect.TypeFor[wire.Phase](), false) // the envelope's fields
	require.NoError(t, err)
}

// generate builds the whole document: the hand-written head, with the
// messages and schemas of the wire types filled in.
func generate() ([]byte, error) {
	headBytes, err := os.ReadFile(headPath)
	if err != nil {
		return nil, err
	}
	// The head's own leading comment is for its readers, not the document's.
	for bytes.HasPrefix(headBytes, []byte("#")) {
		_, headBytes, _ = bytes.Cut(headBytes, []byte("\n"))
	}
	var head yaml.Node
	if err := yaml.Unmarshal(headBytes, &head); err != nil {
		return nil, err
	}
	docs, err := parseDocs(".")
	if err != nil {
		return nil, err
	}
	g := &gen{docs: docs, schemas: omap{}}
	messages := omap{}
	channelMsgs := map[string]omap{}
	opMsgs := map[string][]any{}
	add := func(channel, op, name string, msg omap) {
		messages = append(messages, kv{name, msg})
		if channelMsgs[channel] == nil {
			channelMsgs[channel] = omap{}
		}
		channelMsgs[channel] = append(channelMsgs[channel], kv{name, ref("#/components/messages/" + name)})
		opMsgs[op] = append(opMsgs[op], ref("#/channels/"+channel+"/messages/"+name))
	}

	if err := g.define(reflect.TypeFor[wire.Status]()); err != nil {
		return nil, err
	}
	add("status", "publishStatus", "status", omap{
		{"name", "status"}, {"title", "Status"}, {"summary", "The daemon online or offline (retained)."},
		{"payload", ref("#/components/schemas/Status")},
	})

	env, err := g.envelope(wire.StateKind, reflect.TypeFor[wire.State](), true)
	if err != nil {
		return nil, err
	}
	g.schemas = append(g.schemas, kv{"StateEvent", env})
	add("state", "publishState", "state", omap{
		{"name", "state"}, {"title", "State"}, {"summary", "Snapshot of the whole table (retained)."},
		{"payload", ref("#/components/schemas/StateEvent")},
	})

	var union []any
	for _, k := range wire.Kinds {
		env, err := g.envelope(k.Kind, reflect.TypeOf(k.Data), false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.Kind, err)
		}
		name := camel(k.Kind) + "Event"
		g.schemas = append(g.schemas, kv{name, env})
		union = append(union, ref("#/components/schemas/"+name))
		add("events", "publishEvents", k.Kind, omap{
			{"name", k.Kind}, {"title", camel(k.Kind)}, {"summary", k.Summary},
			{"payload", ref("#/components/schemas/" + name)},
		})
	}
	g.schemas = append(g.schemas, kv{"Event", omap{
		{"description", "Any event of the events topic: one of the kinds, told apart by `kind`."},
		{"discriminator", "kind"},
		{"oneOf", union},
	}})

	var cmds []any
	for _, c := range wire.Commands {
		typ := reflect.TypeOf(c.Value)
		if err := g.define(typ); err != nil {
			return nil, err
		}
		cmds = append(cmds, ref("#/components/schemas/"+typ.Name()))
		add("commands", "receiveCommands", c.Name, omap{
			{"name", c.Name}, {"title", camel(c.Name)}, {"summary", c.Summary},
			{"payload", ref("#/components/schemas/" + typ.Name())},
		})
	}
	g.schemas = append(g.schemas, kv{"Command", omap{
		{"description", "Any command: one of the types, told apart by `type`."},
		{"oneOf", cmds},
	}})

	if err := g.define(reflect.TypeFor[wire.Reply]()); err != nil {
		return nil, err
	}
	add("replies", "sendReplies", "reply", omap{
		{"name", "reply"}, {"title", "Reply"}, {"summary", "The answer to one command id."},
		{"payload", ref("#/components/schemas/Reply")},
	})

	root := head.Content[0]
	for ch, msgs := range channelMsgs {
		if err := set(root, msgs, "channels", ch, "messages"); err != nil {
			return nil, err
		}
	}
	for op, msgs := range opMsgs {
		if err := insertAfter(root, msgs, "channel", "operations", op); err != nil {
			return nil, err
		}
	}
	if err := set(root, messages, "components", "messages"); err != nil {
		return nil, err
	}
	if err := set(root, g.schemas, "components", "schemas"); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString("# GENERATED by `go test ./studio/wire -update` from the types of\n" +
		"# studio/wire (their doc comments are the descriptions) and from\n" +
		"# studio/wire/asyncapi.head.yaml: edit those, not this file.\n")
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	head.HeadComment = ""
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// gen turns Go types into schemas.
type gen struct {
	docs    map[string]string // "Type" and "Type.Field" -> doc comment
	schemas omap
}

func ref(to string) omap { return omap{{"$ref", to}} }

// envelope is the schema of one kind's envelope: wire.Event with kind
// pinned and data typed.
func (g *gen) envelope(kind string, data reflect.Type, state bool) (omap, error) {
	if err := g.define(data); err != nil {
		return nil, err
	}
	et := reflect.TypeFor[wire.Event]()
	props := omap{}
	var required []any
	for i := range et.NumField() {
		f := et.Field(i)
		name, optional := jsonName(f)
		if !optional {
			required = append(required, name)
		}
		var s omap
		switch f.Name {
		case "Kind":
			s = omap{{"description", g.docs["Event.Kind"]}, {"type", "string"}, {"const", kind}}
		case "Data":
			s = ref("#/components/schemas/" + data.Name())
		case "Seq":
			s = omap{{"description", g.docs["Event.Seq"]}, {"type", "integer"}}
			if state {
				s = append(s, kv{"const", 0})
			} else {
				s = append(s, kv{"minimum", 1})
			}
		default:
			var err error
			if s, err = g.field(f, "Event"); err != nil {
				return nil, err
			}
		}
		props = append(props, kv{name, s})
	}
	desc := fmt.Sprintf("An event of kind `%s`: the envelope and its data.", kind)
	if state {
		desc = "A state snapshot: the envelope with `kind` state, `seq` 0, and the table as data."
	}
	return omap{
		{"type", "object"}, {"description", desc},
		{"required", required}, {"additionalProperties", false}, {"properties", props},
	}, nil
}

// define adds the schema of a struct type of package wire (and of the
// types it uses) to the components.
func (g *gen) define(t reflect.Type) error {
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("%s is not a struct", t)
	}
	if slices.ContainsFunc(g.schemas, func(e kv) bool { return e.k == t.Name() }) {
		return nil
	}
	doc := g.docs[t.Name()]
	if doc == "" {
		return fmt.Errorf("type %s has no doc comment", t.Name())
	}
	s := omap{{"type", "object"}, {"description", doc}}
	g.schemas = append(g.schemas, kv{t.Name(), nil}) // placeholder: keeps the order, stops recursion
	at := len(g.schemas) - 1
	props := omap{}
	var required []any
	for i := range t.NumField() {
		f := t.Field(i)
		name, optional := jsonName(f)
		if name == "" {
			continue
		}
		if !optional {
			required = append(required, name)
		}
		fs, err := g.field(f, t.Name())
		if err != nil {
			return err
		}
		props = append(props, kv{name, fs})
	}
	if len(required) > 0 {
		s = append(s, kv{"required", required})
	}
	s = append(s, kv{"additionalProperties", false}, kv{"properties", props})
	g.schemas[at].v = s
	return nil
}

// field is the schema of one struct field.
func (g *gen) field(f reflect.StructField, owner string) (omap, error) {
	doc := g.docs[owner+"."+f.Name]
	if doc == "" {
		return nil, fmt.Errorf("field %s.%s has no doc comment", owner, f.Name)
	}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Time]() {
		// The type's own description stands for the field (siblings of
		// $ref are ignored by JSON Schema).
		return ref("#/components/schemas/" + t.Name()), g.define(t)
	}
	s := omap{{"description", doc}}
	switch t.Kind() {
	case reflect.Slice:
		items, err := g.valueSchema(t.Elem(), f.Tag)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", owner, f.Name, err)
		}
		return append(s, kv{"type", "array"}, kv{"items", items}), nil
	case reflect.Map:
		vals, err := g.valueSchema(t.Elem(), f.Tag)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", owner, f.Name, err)
		}
		return append(s, kv{"type", "object"}, kv{"additionalProperties", vals}), nil
	}
	v, err := g.valueSchema(t, f.Tag)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", owner, f.Name, err)
	}
	return append(s, v...), nil
}

// valueSchema is the schema of a scalar (or struct) value, with the
// constraints of the field's tags.
func (g *gen) valueSchema(t reflect.Type, tag reflect.StructTag) (omap, error) {
	var s omap
	switch {
	case t == reflect.TypeFor[time.Time]():
		return omap{{"type", "string"}, {"format", "date-time"}}, nil
	case t.Kind() == reflect.Struct:
		return ref("#/components/schemas/" + t.Name()), g.define(t)
	case t.Kind() == reflect.String:
		s = omap{{"type", "string"}}
	case t.Kind() == reflect.Bool:
		s = omap{{"type", "boolean"}}
	case isInt(t) || isUint(t):
		s = omap{{"type", "integer"}}
	default:
		return nil, fmt.Errorf("no schema for %s", t)
	}
	if e, ok := tag.Lookup("enum"); ok {
		var vals []any
		for _, v := range strings.Split(e, ",") {
			if t.Kind() == reflect.String {
				vals = append(vals, v)
			} else {
				n, err := strconv.Atoi(v)
				if err != nil {
					return nil, err
				}
				vals = append(vals, n)
			}
		}
		s = append(s, kv{"enum", vals})
	}
	for _, k := range []string{"minimum", "minLength", "maxLength"} {
		if v, ok := tag.Lookup(k); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, err
			}
			s = append(s, kv{k, n})
		}
	}
	if _, ok := tag.Lookup("minimum"); !ok && isUint(t) {
		s = append(s, kv{"minimum", 0})
	}
	if v, ok := tag.Lookup("pattern"); ok {
		s = append(s, kv{"pattern", v})
	}
	return s, nil
}

// jsonName is the field's JSON name and whether it may be absent.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
}

// parseDocs reads the doc comments of the package's types and fields, as
// one-paragraph text.
func parseDocs(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	docs := map[string]string{}
	clean := func(cg *ast.CommentGroup) string {
		if cg == nil {
			return ""
		}
		return strings.Join(strings.Fields(cg.Text()), " ")
	}
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, sp := range gd.Specs {
				ts := sp.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil {
					doc = gd.Doc
				}
				docs[ts.Name.Name] = clean(doc)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fl := range st.Fields.List {
					for _, n := range fl.Names {
						docs[ts.Name.Name+"."+n.Name] = clean(fl.Doc)
					}
				}
			}
		}
	}
	return docs, nil
}

// camel turns card_dealt into CardDealt.
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// kv and omap are an ordered YAML mapping.
type kv struct {
	k string
	v any
}

type omap []kv

// MarshalYAML keeps the order of the keys.
func (m omap) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, e := range m {
		var v yaml.Node
		if err := v.Encode(e.v); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: e.k}, &v)
	}
	return n, nil
}

// lookup finds the value node at path in a mapping node.
func lookup(n *yaml.Node, path ...string) (*yaml.Node, error) {
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: not a mapping", key)
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil, fmt.Errorf("no %q in asyncapi.head.yaml", key)
		}
		n = next
	}
	return n, nil
}

// set replaces the node at path with v.
func set(root *yaml.Node, v any, path ...string) error {
	n, err := lookup(root, path...)
	if err != nil {
		return err
	}
	var nv yaml.Node
	if err := nv.Encode(v); err != nil {
		return err
	}
	*n = nv
	return nil
}

// insertAfter adds a `messages` key after the key `after` of the mapping
// at path.
func insertAfter(root *yaml.Node, v any, after string, path ...string) error {
	n, err := lookup(root, path...)
	if err != nil {
		return err
	}
	var nv yaml.Node
	if err := nv.Encode(v); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == after {
			kn := &yaml.Node{Kind: yaml.ScalarNode, Value: "messages"}
			n.Content = slices.Insert(n.Content, i+2, kn, &nv)
			return nil
		}
	}
	return fmt.Errorf("no %q under %v", after, path)
}

func isInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

func isUint(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}
