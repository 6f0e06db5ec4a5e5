package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProductionBuild: the production tabled (-tags production, as make
// build makes it) links no simulator, not periph's gpiotest and not the
// embedded broker (mochi), and says so when asked for the demo or started
// without broker.url; the default build (go run, make run, the tests) has
// them.
func TestProductionBuild(t *testing.T) {
	deps := func(tags ...string) string {
		args := append([]string{"list", "-deps"}, tags...)
		out, err := exec.Command("go", append(args, ".")...).Output()
		require.NoError(t, err)
		return string(out)
	}
	prod := deps("-tags", "production")
	for _, bad := range []string{"/simulators/", "gpiotest", "mochi-mqtt", "/embedbroker"} {
		assert.NotContains(t, prod, bad, "the production build links %s", bad)
	}
	dflt := deps()
	assert.Contains(t, dflt, "/simulators/shoe", "the default build has the demo")
	assert.Contains(t, dflt, "/embedbroker", "the default build has the embedded broker")

	bin := filepath.Join(t.TempDir(), "tabled")
	out, err := exec.Command("go", "build", "-tags", "production", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "--demo", "--data-dir", t.TempDir(), "--log-format", "json").CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.True(t, strings.Contains(string(out), "no simulators"), "%s", out)
	out, err = exec.Command(bin, "--data-dir", t.TempDir(), "--log-format", "json").CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.True(t, strings.Contains(string(out), "no embedded broker"), "%s", out)
	// --check-config says the same before anything starts.
	for _, args := range [][]string{{"--check-config", "--demo"}, {"--check-config"}} {
		cmd := exec.Command(bin, args...)
		out, err = cmd.CombinedOutput()
		require.Error(t, err, "%s", out)
		assert.Equal(t, 2, cmd.ProcessState.ExitCode(), "%v: %s", args, out)
		assert.Contains(t, string(out), "this build has no", "%v", args)
	}
	out, err = exec.Command(bin, "--check-config", "--broker", "tcp://127.0.0.1:1883", "--shoe", "/dev/null").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "configuration OK")
}
