package strategy_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDependencies keeps the package pure: the engine and the simulator
// link it, so it may import only the standard library and table/card.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		assert.Contains(t, []string{
			"github.com/livetable/livetable/table/strategy",
			"github.com/livetable/livetable/table/card",
		}, dep)
	}
	std, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, banned := range []string{"net", "net/http", "os/exec"} {
		assert.NotContains(t, strings.Fields(string(std)), banned, "strategy must not reach the network or run programs (fmt brings os itself)")
	}
}
