package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type caseFile = Case

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
			} else {
				require.NoError(t, err, c.Why)
			}
			if diffs := Check(c.Expected, out, err); len(diffs) > 0 {
				b, _ := json.Marshal(out)
				t.Errorf("%s\nwhy: %s\ndifferences:\n  %s\ngot: %s", c.Name, c.Why, strings.Join(diffs, "\n  "), b)
			}
		})
	}
}

func TestSubsetCanFail(t *testing.T) {
	got := map[string]any{"a": []any{1.0, 2.0}, "b": map[string]any{"c": "x"}}
	assert.Empty(t, subset("", map[string]any{"a": []any{1.0, 2.0}}, got))
	assert.NotEmpty(t, subset("", map[string]any{"a": []any{1.0}}, got), "whole-length lists")
	assert.NotEmpty(t, subset("", map[string]any{"b": map[string]any{"c": "y"}}, got))
	assert.NotEmpty(t, subset("", map[string]any{"z": nil}, got))
}
