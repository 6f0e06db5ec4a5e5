package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type caseFile struct {
	Name     string          `json:"name"`
	Why      string          `json:"why"`
	Input    json.RawMessage `json:"input"`
	Expected map[string]any  `json:"expected"`
}

// TestScenarios runs every hand-written case of testdata/scenarios through
// the engine and compares the expected subset.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("../../testdata/scenarios/*.json")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 60, "issue 3 asks for at least 60 scenarios")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			var c caseFile
			require.NoError(t, json.Unmarshal(raw, &c))
			require.NotEmpty(t, c.Why, "every case explains its reasoning")
			in, err := Decode(bytes.NewReader(c.Input))
			var out *Output
			if err == nil {
				out, err = Run(in)
			}
			if want, ok := c.Expected["error"]; ok && want == true {
				require.Error(t, err, "the scenario must be rejected (%s)", c.Why)
				return
			}
			require.NoError(t, err, c.Why)
			var got map[string]any
			b, _ := json.Marshal(out)
			require.NoError(t, json.Unmarshal(b, &got))
			if diffs := subset("", c.Expected, got); len(diffs) > 0 {
				t.Errorf("%s\nwhy: %s\ndifferences:\n%s\ngot: %s", c.Name, c.Why, join(diffs), b)
			}
		})
	}
}

// subset lists where got differs from the expected subset: every key of
// want must be in got with an equal value; lists compare element by element
// over their whole length.
func subset(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var out []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			out = append(out, subset(path+"."+k, wv, gv)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, w, got)}
		}
		var out []string
		for i := range w {
			out = append(out, subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
		}
		return nil
	}
}

func join(ss []string) string {
	var b bytes.Buffer
	for _, s := range ss {
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}

func TestSubsetCanFail(t *testing.T) {
	got := map[string]any{"a": []any{1.0, 2.0}, "b": map[string]any{"c": "x"}}
	assert.Empty(t, subset("", map[string]any{"a": []any{1.0, 2.0}}, got))
	assert.NotEmpty(t, subset("", map[string]any{"a": []any{1.0}}, got), "whole-length lists")
	assert.NotEmpty(t, subset("", map[string]any{"b": map[string]any{"c": "y"}}, got))
	assert.NotEmpty(t, subset("", map[string]any{"z": nil}, got))
}
