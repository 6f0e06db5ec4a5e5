package console

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeps: the console talks to the table only through its Table seam
// and decides nothing itself, so it imports no device, no MQTT, no
// simulator, and no test helper in production code.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/livetable/livetable/studio/console").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{
			"github.com/livetable/livetable/simulators/",
			"github.com/livetable/livetable/shoereader",
			"github.com/livetable/livetable/shuffler",
			"github.com/livetable/livetable/studio/mqttlink",
			"github.com/livetable/livetable/studio/console/consoletest",
			"github.com/chromedp/",
			"github.com/eclipse/paho.mqtt.golang",
			"periph.io/x/host",
			"go.bug.st/serial",
			"github.com/stretchr/testify",
		} {
			require.False(t, strings.HasPrefix(dep, bad), "imports %s", dep)
		}
	}
}
