// Package wiretest checks messages against docs/asyncapi.yaml with a real
// JSON Schema validator (santhosh-tekuri/jsonschema, draft 7, formats
// asserted), for the tests of the link, the daemon and the contract.
package wiretest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// ErrNoSchema is returned for a message the contract has no schema for:
// an event kind, a channel.
var ErrNoSchema = errors.New("wiretest: no schema in the contract")

// Contract is an AsyncAPI document compiled for validation.
type Contract struct {
	// Doc is the document as decoded YAML.
	Doc      map[string]any
	channels map[string]*jsonschema.Schema // channel -> payload schema (union for events and commands)
	kinds    map[string]*jsonschema.Schema // event kind -> payload schema
}

// Load compiles the document at path.
func Load(path string) (*Contract, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("wiretest: %s: %w", path, err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, err
	}
	const url = "file:///asyncapi.json"
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft7)
	comp.AssertFormat()
	if err := comp.AddResource(url, inst); err != nil {
		return nil, err
	}
	c := &Contract{Doc: doc, channels: map[string]*jsonschema.Schema{}, kinds: map[string]*jsonschema.Schema{}}
	compile := func(ptr string) (*jsonschema.Schema, error) {
		s, err := comp.Compile(url + "#" + ptr)
		if err != nil {
			return nil, fmt.Errorf("wiretest: compile %s: %w", ptr, err)
		}
		return s, nil
	}
	for ch, ptr := range map[string]string{
		"status": "/components/messages/status/payload", "state": "/components/messages/state/payload",
		"events": "/components/schemas/Event", "commands": "/components/schemas/Command",
		"replies": "/components/messages/reply/payload",
	} {
		if c.channels[ch], err = compile(ptr); err != nil {
			return nil, err
		}
	}
	chans, _ := doc["channels"].(map[string]any)
	events, _ := chans["events"].(map[string]any)
	msgs, _ := events["messages"].(map[string]any)
	for kind := range msgs {
		if c.kinds[kind], err = compile("/components/messages/" + kind + "/payload"); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Kinds are the event kinds the contract has a message for.
func (c *Contract) Kinds() []string {
	out := make([]string, 0, len(c.kinds))
	for k := range c.kinds {
		out = append(out, k)
	}
	return out
}

// Validate checks one payload of a channel (status, state, events,
// commands, replies). An event is checked against its kind's message and
// against the union; a kind with no message is ErrNoSchema.
func (c *Contract) Validate(channel string, payload []byte) error {
	s, ok := c.channels[channel]
	if !ok {
		return fmt.Errorf("%w: channel %q", ErrNoSchema, channel)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("wiretest: %s: not JSON: %w", channel, err)
	}
	if channel == "events" {
		kind := ""
		if m, ok := v.(map[string]any); ok {
			kind, _ = m["kind"].(string)
		}
		ks, ok := c.kinds[kind]
		if !ok {
			return fmt.Errorf("%w: event kind %q", ErrNoSchema, kind)
		}
		if err := ks.Validate(v); err != nil {
			return fmt.Errorf("event %s: %w", kind, err)
		}
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%s: %w", channel, err)
	}
	return nil
}

// Channel names the contract's channel of a topic under root
// (livetable/{studio}/{table}/), commands/... being "commands".
func Channel(root, topic string) string {
	ch := strings.TrimPrefix(topic, root)
	if ch == "commands" || strings.HasPrefix(ch, "commands/") {
		return "commands"
	}
	return ch
}
