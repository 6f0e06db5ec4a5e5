package mqttlink_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
