package mqttlink

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTopicLevel: command topics are matched whole, level for level.
func TestTopicLevel(t *testing.T) {
	l := &Link{topics: TopicsFor("s1", "t1")}
	root := l.topics.Root
	tests := []struct {
		topic, want string
		ok          bool
	}{
		{root + "commands", "", true},
		{root + "commands/decision", "decision", true},
		{root + "commands/decisions", "decisions", true},
		{root + "commands/bets_closed", "bets_closed", true},
		{root + "commands/insurance", "insurance", true},
		{root + "commands/resend", "resend", true},
		{root + "commands/supervisor", "supervisor", true},
		{root + "commands/pause", "pause", true},
		{root + "commands/correct", "correct", true},
		{root + "commands/decision/extra", "", false},
		{root + "commands/decision/", "", false},
		{root + "commands/", "", false},
		{root + "commands//decision", "", false},
		{root + "commands/decision/#", "", false},
		{root + "commands/+", "", false},
		{root + "commands/#", "", false},
		{root + "commands/supervisor/pause", "", false},
		{root + "commands/Decision", "", false},
		{root + "commandsdecision", "", false},
		{"livetable/s1/t2/commands/decision", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		got, err := l.topicLevel(tc.topic)
		if tc.ok {
			assert.NoError(t, err, tc.topic)
			assert.Equal(t, tc.want, got, tc.topic)
		} else {
			assert.True(t, errors.Is(err, ErrWrongTopic), "%q: %v", tc.topic, err)
			assert.True(t, errors.Is(err, ErrMalformedCommand), tc.topic)
		}
	}
}

// TestIDFromPrefix: the id of a payload too large to read, from its first
// bytes, only when it is there whole, valid and named once.
func TestIDFromPrefix(t *testing.T) {
	tests := []struct{ name, prefix, want string }{
		{"first", `{"id":"a-1","type":"decision","pad":"xxxx`, "a-1"},
		{"after other fields", `{"schema":2,"type":"decisions","id":"b-2","entries":[{"slot":1`, "b-2"},
		{"after a nested value", `{"bets":[{"seat":1,"side":{"x":1}}],"id":"c-3","pad":"`, "c-3"},
		{"a nested id is not the command's", `{"bets":[{"id":"no"}],"pad":"xx`, ""},
		{"cut in the id", `{"schema":2,"id":"d-`, ""},
		{"cut before the id", `{"schema":2,"pad":"xxxxxx`, ""},
		{"named twice", `{"id":"e-1","id":"e-2","pad":"`, ""},
		{"not a string", `{"id":5,"pad":"`, ""},
		{"not an object", `["id","x"]`, ""},
		{"not JSON", `xxxxxxxx`, ""},
		{"empty", ``, ""},
		{"an id too long", `{"id":"` + string(make([]byte, 0)) + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + `","pad":"`, ""},
		{"a control character", `{"id":"a\u0001b","pad":"`, ""},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, idFromPrefix([]byte(tc.prefix)), tc.name)
	}
}
