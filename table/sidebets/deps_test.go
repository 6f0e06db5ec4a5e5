package sidebets

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDependencies keeps the package pure: the engine and the simulator call
// it on every round, so it may depend only on table/card and the standard
// library, and import nothing that does I/O or reads the clock.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	list := func(format string) []string {
		out, err := exec.Command("go", "list", "-f", format, ".").Output()
		require.NoError(t, err)
		return strings.Fields(string(out))
	}
	const self = "github.com/livetable/livetable/table/sidebets"
	allowed := map[string]bool{"github.com/livetable/livetable/table/card": true}
	for _, dep := range list(`{{range .Deps}}{{.}} {{end}}`) {
		if strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") && dep != self {
			assert.True(t, allowed[dep], "sidebets must not depend on %s", dep)
		}
	}
	forbidden := []string{"os", "net", "net/http", "io/fs", "syscall", "time", "math/rand", "math/rand/v2"}
	for _, imp := range list(`{{range .Imports}}{{.}} {{end}}`) {
		assert.NotContains(t, forbidden, imp, "sidebets must not import %s", imp)
	}
}
