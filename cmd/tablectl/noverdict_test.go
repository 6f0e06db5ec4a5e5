package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/supervisors"
)

// TestNoReplyOverMQTTIsNoVerdict: a signed command that gets no reply
// within --timeout has no verdict: the table may have applied it (its
// reply lost, the table slow, an ACL that drops replies), so tablectl
// exits 3, as its usage and deploy.md say, and a script sends it again
// with the same --id. It exited 1, "refused", for a pause that may be in
// force (seen following deploy.md on a real mosquitto: without --user
// tablectl took the table's own MQTT user from --config, whose ACL drops
// the publication). Here no table listens at all.
func TestNoReplyOverMQTTIsNoVerdict(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	_, key, err := supervisors.New("anna", supervisors.RoleSupervisor, "correct horse battery")
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "anna.key")
	require.NoError(t, supervisors.WriteKey(keyFile, key))
	for _, cmd := range [][]string{{"pause", "--reason", "camera"}, {"resume"}, {"void", "--round", "#10:00:00", "--reason", "misdeal"}} {
		code, _, errOut := tablectl(t, "", append([]string{cmd[0], "--data-dir", t.TempDir(), "--broker", mq.URL(),
			"--table", "t9", "--as", "anna", "--sign-key", keyFile, "--timeout", "500ms"}, cmd[1:]...)...)
		assert.Equal(t, exitNoVerdict, code, "%s: %s", cmd[0], errOut)
		assert.Contains(t, errOut, "no reply to "+cmd[0], cmd[0])
	}
}
