package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/supervisors"
)

// TestHangupWhileStartingAndWithABrokenAccountsFile: SIGHUP (systemctl
// reload) is the operator's way to have tabled read the accounts again.
// One that came while tabled was still starting (before its handler,
// after the journal's replay and the link's setup) ended the process:
// SIGHUP's default action. Now it is taken from the first step and
// reloads the accounts once the table runs. A SIGHUP with a broken
// accounts file keeps the previous accounts, says so, and the table
// plays on.
func TestHangupWhileStartingAndWithABrokenAccountsFile(t *testing.T) {
	bin := buildTabled(t)
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	require.NoError(t, os.MkdirAll(data, 0o750))
	acct, _, err := supervisors.New("anna", supervisors.RoleSupervisor, "anna-password")
	require.NoError(t, err)
	accts := &supervisors.List{}
	require.NoError(t, accts.Add(acct))
	accounts := filepath.Join(data, supervisors.FileName)
	require.NoError(t, accts.Save(accounts))
	cfgPath := filepath.Join(dir, "tabled.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `studio: it
table: hangup
data_dir: %s
log_format: json
log_level: info
broker: {url: %q}
gpio: {sim: true}
console: {addr: "off"}
demo: {enabled: true, seed: 5, pace: 2ms, think: 5ms, betting: 150ms, seats: 3}
`, data, mosq.URL()), 0o644))

	cmd := exec.Command(bin, "--config", cfgPath)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := bufio.NewScanner(stderr)
	var seen []string
	// upTo reads the log up to the first line with want (which may have
	// been read already); false when the log ends first (the process
	// exited).
	upTo := func(want string) bool {
		for _, l := range seen {
			if strings.Contains(l, want) {
				return true
			}
		}
		for lines.Scan() {
			seen = append(seen, lines.Text())
			if strings.Contains(lines.Text(), want) {
				return true
			}
		}
		return false
	}
	// The first line of the start, then the signal: the journal, the
	// broker and the link are still to come.
	require.True(t, upTo(`"supervisor accounts"`), "log: %s", strings.Join(seen, "\n"))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	if !upTo(`"tabled running"`) {
		exited = true
		err := cmd.Wait()
		t.Fatalf("tabled ended on a SIGHUP while starting (%v); log:\n%s", err, strings.Join(seen, "\n"))
	}
	require.True(t, upTo(`"SIGHUP: accounts reloaded"`), "the SIGHUP that came while starting is served once running; log: %s", strings.Join(seen, "\n"))

	// A broken accounts file: the previous accounts stay, and it says so.
	seen = nil
	require.NoError(t, os.WriteFile(accounts, []byte("accounts: [ {name: \"\n"), 0o640))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	require.True(t, upTo(`"SIGHUP: accounts not reloaded; the previous ones stay"`), "log: %s", strings.Join(seen, "\n"))
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	exited = true
	assert.NoError(t, cmd.Wait(), "a clean stop after both")
}
