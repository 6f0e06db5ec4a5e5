package shuffler_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeps checks the architecture's rules for this package and pinmap:
// no simulator in production code, and periph's host drivers are
// initialised by cmd/* only, so the controller sees nothing but the gpio
// interfaces.
func TestDeps(t *testing.T) {
	for _, pkg := range []string{"github.com/livetable/livetable/shuffler", "github.com/livetable/livetable/shuffler/pinmap"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, string(out))
		for _, dep := range strings.Fields(string(out)) {
			for _, bad := range []string{"github.com/livetable/livetable/simulators/", "periph.io/x/host", "go.bug.st/serial", "github.com/livetable/livetable/studio/"} {
				require.False(t, strings.HasPrefix(dep, bad), "%s imports %s", pkg, dep)
			}
		}
	}
}
