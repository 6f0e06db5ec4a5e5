package mqttlink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// asyncAPIPath is the contract, relative to this package.
const asyncAPIPath = "../../docs/asyncapi.yaml"

// spec is a parsed AsyncAPI document with a small JSON-schema checker: it
// knows type, required, properties, additionalProperties: false, enum,
// items, minimum, oneOf and local $ref, which is all docs/asyncapi.yaml
// uses.
type spec struct {
	root map[string]any
}

func loadSpec(t *testing.T) *spec {
	t.Helper()
	b, err := os.ReadFile(asyncAPIPath)
	require.NoError(t, err)
	var root map[string]any
	require.NoError(t, yaml.Unmarshal(b, &root))
	return &spec{root: root}
}

// lookup follows a local reference such as "#/components/schemas/Event".
func (s *spec) lookup(ref string) (map[string]any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("only local $ref is supported: %q", ref)
	}
	var node any = s.root
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: %q is not under a mapping", ref, part)
		}
		if node, ok = m[part]; !ok {
			return nil, fmt.Errorf("$ref %q: no %q", ref, part)
		}
	}
	m, ok := node.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q is not a mapping", ref)
	}
	return m, nil
}

// deref resolves a node that may be a $ref, repeatedly.
func (s *spec) deref(n map[string]any) (map[string]any, error) {
	for range 16 {
		ref, ok := n["$ref"].(string)
		if !ok {
			return n, nil
		}
		var err error
		if n, err = s.lookup(ref); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("$ref chain too long")
}

// payloadSchema is the payload schema of a channel's (only) message.
func (s *spec) payloadSchema(channel string) (map[string]any, error) {
	ch, err := s.lookup("#/channels/" + channel)
	if err != nil {
		return nil, err
	}
	msgs, _ := ch["messages"].(map[string]any)
	if len(msgs) != 1 {
		return nil, fmt.Errorf("channel %s: want one message, have %d", channel, len(msgs))
	}
	for _, m := range msgs {
		msg, err := s.deref(m.(map[string]any))
		if err != nil {
			return nil, err
		}
		p, ok := msg["payload"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("channel %s: message without payload", channel)
		}
		return s.deref(p)
	}
	return nil, nil
}

// decodeJSON reads a payload keeping numbers exact.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// validate checks v against schema; the error names the path that failed.
func (s *spec) validate(schema map[string]any, v any, path string) error {
	schema, err := s.deref(schema)
	if err != nil {
		return err
	}
	if alts, ok := schema["oneOf"].([]any); ok {
		matched := 0
		var errs []string
		for _, a := range alts {
			if err := s.validate(a.(map[string]any), v, path); err == nil {
				matched++
			} else {
				errs = append(errs, err.Error())
			}
		}
		if matched != 1 {
			return fmt.Errorf("%s: matches %d of oneOf (%s)", path, matched, strings.Join(errs, "; "))
		}
	}
	if typ, ok := schema["type"].(string); ok {
		if err := checkType(typ, v); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if enum, ok := schema["enum"].([]any); ok {
		if !slices.ContainsFunc(enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
			return fmt.Errorf("%s: %v not in %v", path, v, enum)
		}
	}
	if minimum, ok := schema["minimum"].(int); ok {
		if n, isNum := v.(json.Number); isNum {
			if f, err := n.Float64(); err != nil || f < float64(minimum) {
				return fmt.Errorf("%s: %v below minimum %d", path, v, minimum)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, r := range asSlice(schema["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: missing required %q", path, r)
			}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, val := range obj {
			p, ok := props[k].(map[string]any)
			if !ok {
				if ap, set := schema["additionalProperties"].(bool); set && !ap {
					return fmt.Errorf("%s: unexpected property %q", path, k)
				}
				continue
			}
			if err := s.validate(p, val, path+"."+k); err != nil {
				return err
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := schema["items"].(map[string]any); ok {
			for i, el := range arr {
				if err := s.validate(items, el, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func checkType(typ string, v any) error {
	ok := false
	switch typ {
	case "object":
		_, ok = v.(map[string]any)
	case "array":
		_, ok = v.([]any)
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "number":
		_, ok = v.(json.Number)
	case "integer":
		if n, isNum := v.(json.Number); isNum {
			_, err := n.Int64()
			ok = err == nil
		}
	case "null":
		ok = v == nil
	default:
		return fmt.Errorf("schema type %q not supported by the checker", typ)
	}
	if !ok {
		return fmt.Errorf("%v (%T) is not of type %s", v, v, typ)
	}
	return nil
}

func TestAsyncAPIDocument(t *testing.T) {
	s := loadSpec(t)
	assert.Equal(t, "3.0.0", s.root["asyncapi"])
	for _, ch := range []string{"status", "state", "events", "commands", "replies"} {
		_, err := s.payloadSchema(ch)
		require.NoError(t, err, ch)
	}
	// Every $ref in the document resolves.
	var walk func(n any)
	walk = func(n any) {
		switch v := n.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				_, err := s.lookup(ref)
				assert.NoError(t, err)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(s.root)
	// The addresses match the topics the link uses.
	topics := mqttlink.TopicsFor("{studio}", "{table}")
	for ch, topic := range map[string]string{"status": topics.Status, "state": topics.State, "events": topics.Events, "replies": topics.Replies} {
		c, err := s.lookup("#/channels/" + ch)
		require.NoError(t, err)
		assert.Equal(t, topic, c["address"], ch)
	}
}

// TestSchemaChecker shows the checker rejects what it should, so the
// message test below can fail.
func TestSchemaChecker(t *testing.T) {
	s := loadSpec(t)
	event, err := s.payloadSchema("events")
	require.NoError(t, err)
	reply, err := s.payloadSchema("replies")
	require.NoError(t, err)
	tests := []struct {
		name    string
		schema  map[string]any
		payload string
		ok      bool
	}{
		{"event", event, `{"schema":1,"seq":3,"time":"2026-11-21T23:59:00Z","table":"t1","round":"r","kind":"card_dealt","data":{}}`, true},
		{"event without seq", event, `{"schema":1,"time":"2026-11-21T23:59:00Z","table":"t1","kind":"x","data":{}}`, false},
		{"event seq 0", event, `{"schema":1,"seq":0,"time":"t","table":"t1","kind":"x","data":{}}`, false},
		{"event seq not integer", event, `{"schema":1,"seq":1.5,"time":"t","table":"t1","kind":"x","data":{}}`, false},
		{"event schema 2", event, `{"schema":2,"seq":1,"time":"t","table":"t1","kind":"x","data":{}}`, false},
		{"event extra field", event, `{"schema":1,"seq":1,"time":"t","table":"t1","kind":"x","data":{},"extra":1}`, false},
		{"event data not object", event, `{"schema":1,"seq":1,"time":"t","table":"t1","kind":"x","data":[]}`, false},
		{"reply", reply, `{"schema":1,"id":"a","accepted":false,"reason":"no"}`, true},
		{"reply accepted as string", reply, `{"schema":1,"id":"a","accepted":"yes"}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeJSON([]byte(tc.payload))
			require.NoError(t, err)
			err = s.validate(tc.schema, v, "$")
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

// TestAsyncAPIMessages publishes real events and commands through a link
// and checks every message seen on the broker against docs/asyncapi.yaml.
func TestAsyncAPIMessages(t *testing.T) {
	s := loadSpec(t)
	b := startBroker(t)
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{CleanSession: true})
	r := startLink(t, testOptions(t, b.URL()), ruleSubmitter())
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)

	const n = 60
	feed(r, 1, n)
	require.Eventually(t, func() bool { return sub.MaxSeq() == n }, waitFor, poll)
	ctx := context.Background()
	for _, tc := range commandCases {
		require.NoError(t, sub.Publish(ctx, topics.Root+"commands", []byte(tc.payload)))
	}
	require.Eventually(t, func() bool { return len(sub.MessagesOn(topics.Replies)) == len(commandCases) }, waitFor, poll)
	r.stop(t)
	require.Eventually(t, func() bool {
		m := sub.MessagesOn(topics.Status)
		return len(m) >= 2 && string(m[len(m)-1].Payload) == mqttlink.StatusOffline
	}, waitFor, poll)

	counts := map[string]int{}
	for _, m := range sub.Messages() {
		channel := strings.TrimPrefix(m.Topic, topics.Root)
		if strings.HasPrefix(channel, "commands") {
			channel = "commands"
		}
		schema, err := s.payloadSchema(channel)
		require.NoError(t, err, m.Topic)
		counts[channel]++
		if channel == "commands" {
			// Commands are the backend's; every one the link accepts must
			// fit the schema.
			if _, derr := mqttlink.DecodeCommand(m.Payload); derr == nil {
				v, err := decodeJSON(m.Payload)
				require.NoError(t, err)
				assert.NoError(t, s.validate(schema, v, "$"), "valid command %s does not fit the schema", m.Payload)
			}
			continue
		}
		var v any = string(m.Payload)
		if channel != "status" {
			v, err = decodeJSON(m.Payload)
			require.NoError(t, err, "%s: %s", m.Topic, m.Payload)
		}
		assert.NoError(t, s.validate(schema, v, "$"), "%s: %s", m.Topic, m.Payload)
	}
	t.Logf("validated messages per channel: %v", counts)
	for _, ch := range []string{"status", "state", "events", "commands", "replies"} {
		assert.Positive(t, counts[ch], ch)
	}
}

// TestAsyncAPICommandSchema checks the command schema against the decoder:
// every command the decoder accepts fits, and the structural rejections
// (missing or unknown fields, unknown types, wrong enum values) do not.
func TestAsyncAPICommandSchema(t *testing.T) {
	s := loadSpec(t)
	schema, err := s.payloadSchema("commands")
	require.NoError(t, err)
	structural := map[string]bool{
		"no id": true, "no schema": true, "future schema": true, "no type": true, "unknown type": true,
		"unknown field": true, "foreign field": true, "decision no seat": true, "decision seat 0": true,
		"decision no action": true, "decision bad action": true, "seat as string": true,
		"insurance no take": true, "bets missing": true, "bet no player": true, "bet no main": true,
		"bet negative": true, "bet float money": true, "pause no by": true, "correct no card": true,
		"card on pause": true,
	}
	for _, tc := range commandCases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeJSON([]byte(tc.payload))
			if err != nil {
				return // not JSON: nothing to check against a schema
			}
			verr := s.validate(schema, v, "$")
			switch {
			case tc.errIs == nil:
				require.NoError(t, verr)
			case structural[tc.name]:
				require.Error(t, verr)
			}
		})
	}
}
