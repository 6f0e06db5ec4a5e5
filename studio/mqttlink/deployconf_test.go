package mqttlink_test

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestDeployMosquittoConfig runs deploy/mosquitto/livetable.conf as
// shipped, with only paths and ports rewritten, and connects to it the
// way a backend does: the example must load and work.
func TestDeployMosquittoConfig(t *testing.T) {
	bin, err := mqttlinktest.MosquittoPath()
	require.NoError(t, err)
	conf, err := os.ReadFile("../../deploy/mosquitto/livetable.conf")
	require.NoError(t, err)
	dir := t.TempDir()
	ca := mqttlinktest.NewCA(t, dir, "studio")
	srvCert, srvKey := ca.Issue(t, "server", true)
	cliCert, cliKey := ca.Issue(t, "backend", false)
	mqttlinktest.WritePasswordFile(t, filepath.Join(dir, "passwd"), map[string]string{"backend": "backend-pass"})
	acl, err := filepath.Abs("../../deploy/mosquitto/acl")
	require.NoError(t, err)
	tlsPort, plainPort := freeTCPPort(t), freeTCPPort(t)

	s := strings.NewReplacer(
		"/etc/mosquitto/certs/ca.pem", ca.CertFile,
		"/etc/mosquitto/certs/server.pem", srvCert,
		"/etc/mosquitto/certs/server.key", srvKey,
		"/etc/mosquitto/passwd", filepath.Join(dir, "passwd"),
		"/etc/mosquitto/acl", acl,
		"/var/lib/mosquitto/", dir+"/",
		"listener 8883", fmt.Sprintf("listener %d 127.0.0.1", tlsPort),
		"listener 1883 127.0.0.1", fmt.Sprintf("listener %d 127.0.0.1", plainPort),
	).Replace(string(conf))
	if os.Geteuid() == 0 {
		s = "user root\n" + s
	}
	path := filepath.Join(dir, "livetable.conf")
	require.NoError(t, os.WriteFile(path, []byte(s), 0o600))

	cmd := exec.Command(bin, "-c", path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
	})

	url := fmt.Sprintf("ssl://127.0.0.1:%d", tlsPort)
	clientTLS := ca.ClientTLS(t, cliCert, cliKey)
	var c interface{ Disconnect(uint) }
	exited := false
	require.Eventually(t, func() bool {
		select {
		case <-done:
			exited = true
			return true
		default:
		}
		cl, err := connect(url, "deploy-check", "backend", "backend-pass", clientTLS)
		if err != nil {
			return false
		}
		c = cl
		return true
	}, waitFor, 50*time.Millisecond)
	if exited {
		t.Fatalf("mosquitto exited: %s", out.String())
	}
	c.Disconnect(0)
	// The TLS listener wants a client certificate.
	_, err = connect(url, "deploy-nocert", "backend", "backend-pass", ca.ClientTLS(t, "", ""))
	require.Error(t, err)

	checkPacketCap(t, url, clientTLS)
}

// checkPacketCap checks the config's max_packet_size: the largest command
// a table takes (a batch of mqttlink.MaxBatchBytes) passes; a larger one
// disconnects its sender and reaches nobody.
func checkPacketCap(t *testing.T, url string, clientTLS *tls.Config) {
	const topic = "livetable/studio1/t1/commands/decisions"
	got := make(chan int, 16)
	sub, err := connect(url, "deploy-table", "backend", "backend-pass", clientTLS)
	require.NoError(t, err)
	defer sub.Disconnect(0)
	tok := sub.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) { got <- len(m.Payload()) })
	require.True(t, tok.WaitTimeout(waitFor))
	require.NoError(t, tok.Error())

	pub, err := connect(url, "deploy-backend", "backend", "backend-pass", clientTLS)
	require.NoError(t, err)
	defer pub.Disconnect(0)
	send := func(n int) paho.Token { return pub.Publish(topic, 1, false, bytes.Repeat([]byte{'x'}, n)) }
	tok = send(mqttlink.MaxBatchBytes)
	require.True(t, tok.WaitTimeout(waitFor))
	require.NoError(t, tok.Error())
	select {
	case n := <-got:
		require.Equal(t, mqttlink.MaxBatchBytes, n, "the largest batch passes")
	case <-time.After(waitFor):
		t.Fatal("a batch of MaxBatchBytes did not arrive")
	}

	send(2 << 20) // 2 MiB: the broker drops the sender
	require.Eventually(t, func() bool { return !pub.IsConnectionOpen() }, waitFor, poll, "the sender of an oversized packet is disconnected")
	marker, err := connect(url, "deploy-marker", "backend", "backend-pass", clientTLS)
	require.NoError(t, err)
	defer marker.Disconnect(0)
	tok = marker.Publish(topic, 1, false, []byte("marker"))
	require.True(t, tok.WaitTimeout(waitFor))
	require.NoError(t, tok.Error())
	select {
	case n := <-got:
		require.Equal(t, len("marker"), n, "the oversized packet reached the table")
	case <-time.After(waitFor):
		t.Fatal("the marker did not arrive")
	}
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
