package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/table"
)

// TestRemoteOverTLSWithACL is the supervisor's path from another machine:
// tablectl, with the supervisor's MQTT user, a client certificate and the
// account's signing key, pauses and resumes a table behind a real
// mosquitto over TLS with the deploy ACL; a second account's key, and the
// backend (which may not publish on commands/supervisor), get nowhere.
func TestRemoteOverTLSWithACL(t *testing.T) {
	dir := t.TempDir()
	ca := mqttlinktest.NewCA(t, dir, "studio")
	srvCert, srvKey := ca.Issue(t, "server", true)
	tableCert, tableKey := ca.Issue(t, "table-studio1-t1", false)
	supCert, supKey := ca.Issue(t, "supervisor", false)
	acl, err := filepath.Abs("../../deploy/mosquitto/acl")
	require.NoError(t, err)
	passwd := filepath.Join(dir, "passwd")
	mqttlinktest.WritePasswordFile(t, passwd, map[string]string{
		"table-studio1-t1": "t1-pass", "supervisor": "sup-pass", "backend": "backend-pass"})
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Listener: fmt.Sprintf(
		"cafile %s\ncertfile %s\nkeyfile %s\nrequire_certificate true\nallow_anonymous false\npassword_file %s\nacl_file %s\n",
		ca.CertFile, srvCert, srvKey, passwd, acl)})
	url := "ssl://" + mq.Addr()

	// The table: accounts made with tablectl, a controller and its link.
	dataDir := t.TempDir()
	annaKey := filepath.Join(t.TempDir(), "anna.key")
	code, _, errOut := tablectl(t, "correct horse battery\n", "supervisor", "add", "anna", "--data-dir", dataDir, "--key-out", annaKey)
	require.Equal(t, 0, code, errOut)
	code, _, errOut = tablectl(t, "long enough\n", "supervisor", "add", "vito", "--role", "viewer", "--data-dir", dataDir, "--key-out", annaKey+".vito")
	require.Equal(t, 0, code, errOut)
	accounts, err := supervisors.Open(filepath.Join(dataDir, supervisors.FileName))
	require.NoError(t, err)
	c, ctx, _ := startTable(t, dataDir, time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	events, _ := c.Subscribe("mqtt", 1024)
	mo := mqttlink.DefaultOptions()
	mo.Studio, mo.Table, mo.BrokerURL, mo.OutboxDir = "studio1", "t1", url, filepath.Join(dataDir, "outbox")
	mo.ClientID, mo.Username, mo.Password = "table-studio1-t1", "table-studio1-t1", "t1-pass"
	mo.TLS = mqttlink.TLSOptions{CAFile: ca.CertFile, CertFile: tableCert, KeyFile: tableKey}
	mo.Supervisors = accounts
	link, err := mqttlink.New(mo, zerolog.Nop())
	require.NoError(t, err)
	lctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- link.Run(lctx, events, c) }()
	t.Cleanup(func() { stop(); <-done })
	require.Eventually(t, func() bool { return link.Stats().Ready }, 20*time.Second, 10*time.Millisecond)

	// The local socket is not used once --broker is given.
	remote := func(as, key, user, pass, cert, certKey, cmd string, args ...string) (int, string, string) {
		return tablectl(t, "", append([]string{cmd, "--data-dir", dataDir, "--broker", url, "--studio", "studio1", "--table", "t1",
			"--ca-file", ca.CertFile, "--cert-file", cert, "--key-file", certKey,
			"--user", user, "--password", pass, "--as", as, "--sign-key", key, "--timeout", "10s"}, args...)...)
	}
	code, out, errOut := remote("anna", annaKey, "supervisor", "sup-pass", supCert, supKey, "pause", "--reason", "camera 2 down")
	require.Equal(t, 0, code, out+errOut)
	assert.Contains(t, out, "pause accepted")
	require.Eventually(t, func() bool { return c.Snapshot().Paused }, 5*time.Second, 10*time.Millisecond)
	code, out, errOut = tablectl(t, "", "status", "--broker", url, "--studio", "studio1", "--table", "t1", "--ca-file", ca.CertFile,
		"--cert-file", supCert, "--key-file", supKey, "--user", "supervisor", "--password", "sup-pass")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "PAUSED: camera 2 down")
	assert.Contains(t, out, "table studio1/t1 (online)", "the status topic's JSON read")

	// A viewer's key does not command; nor anna's name with vito's key.
	code, out, _ = remote("vito", annaKey+".vito", "supervisor", "sup-pass", supCert, supKey, "resume")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, `"vito" is not a supervisor of this table`)
	code, out, _ = remote("anna", annaKey+".vito", "supervisor", "sup-pass", supCert, supKey, "resume")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "signature does not verify")
	// The backend may not publish supervisor commands: the broker drops
	// it. tablectl cannot tell that from a reply lost: no verdict.
	code, _, errOut = remote("anna", annaKey, "backend", "backend-pass", supCert, supKey, "resume", "--timeout", "2s")
	assert.Equal(t, exitNoVerdict, code)
	assert.Contains(t, errOut, "no reply")
	assert.True(t, c.Snapshot().Paused)

	code, out, errOut = remote("anna", annaKey, "supervisor", "sup-pass", supCert, supKey, "resume")
	require.Equal(t, 0, code, out+errOut)
	require.Eventually(t, func() bool { return !c.Snapshot().Paused }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, table.PhaseBetting, c.Snapshot().Phase)

	// A misread mid-round: corrected, then the round voided, from afar.
	misreadMidRound(t, ctx, c)
	// A correct naming a card that does not wait (signed with it, message
	// v2): the table refuses it, and nothing changes.
	code, out, errOut = remote("anna", annaKey, "supervisor", "sup-pass", supCert, supKey, "correct", "--card", "7c", "--at", "9", "--reason", "misread")
	assert.Equal(t, 4, code, "misread_at's status: "+out+errOut)
	assert.Contains(t, out, "correct refused (misread_at): table: correct names a card that is not the next to correct: no card 9 of the shoe waits for a correction; the next to correct is card 3")
	assert.Contains(t, out, "still waiting for a correction: 1 (cards 3 of the shoe), the next: card 3", "what waits, read off the retained state")
	assert.Equal(t, []int{3}, c.Snapshot().MisreadsAt)
	correctAndVoid(t, c, func(args ...string) (int, string, string) {
		return remote("anna", annaKey, "supervisor", "sup-pass", supCert, supKey, args[0], args[1:]...)
	})
}
