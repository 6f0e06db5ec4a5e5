package light

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeps: the tower sees only periph's gpio interfaces (cmd/* opens the
// real pins) and never a simulator.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/livetable/livetable/studio/light").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"github.com/livetable/livetable/simulators/", "periph.io/x/host", "github.com/livetable/livetable/shuffler"} {
			require.False(t, strings.HasPrefix(dep, bad), "imports %s", dep)
		}
	}
}
