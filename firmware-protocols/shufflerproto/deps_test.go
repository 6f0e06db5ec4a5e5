package shufflerproto

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeps: a protocol package imports the standard library and table/card
// only, so it can never grow I/O.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/livetable/livetable/firmware-protocols/shufflerproto").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "github.com/livetable/livetable/firmware-protocols/shufflerproto", "github.com/livetable/livetable/table/card":
		default:
			t.Errorf("imports %s", dep)
		}
	}
}
