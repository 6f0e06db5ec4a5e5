package scenario_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/livetable/livetable/table/scenario"
)

// FuzzScenario decodes arbitrary bytes as a scenario and plays what
// decodes through the engine: an engineer's script, however wrong, ends in
// a result or an error, never a panic or a hang. The hand-written cases of
// testdata/scenarios are the seeds, so the fuzzer starts from every rule
// the scenarios reach (burn cards, crowds on common cards, supervisor
// corrections and voids, bets behind, side bets).
func FuzzScenario(f *testing.F) {
	files, err := filepath.Glob("../../testdata/scenarios/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no scenarios: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := scenario.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		out, err := scenario.Run(in)
		if err == nil && out == nil {
			t.Fatal("no result and no error")
		}
	})
}
