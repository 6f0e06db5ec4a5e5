package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/supervisors"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// login posts the console's login form and returns the status code.
func login(t *testing.T, base, user, pass string) int {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(base + "/login")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	m := csrfField.FindStringSubmatch(string(page))
	if m == nil {
		return 0
	}
	req, err := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(url.Values{"user": {user}, "password": {pass}, "csrf": {m[1]}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err = c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestAccountsReloadOnSIGHUP: the demo's table lets its demo supervisor in
// while no account exists; an account added to the file (as `tablectl
// supervisor add` does) logs in once tabled gets SIGHUP (systemctl
// reload), and the demo login stops working.
func TestAccountsReloadOnSIGHUP(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	cfg := DefaultConfig()
	cfg.Studio, cfg.Table = "hup", "t1"
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Broker.URL = mosq.URL()
	cfg.GPIO.Sim = true
	cfg.Console.Addr = addr
	cfg.Demo.Enabled = true
	// The reload is logged at info; the test's log keeps to warnings.
	reloaded := mqttlinktest.NewLogWatch(zerolog.NewTestWriter(t), zerolog.WarnLevel, `"accounts":1,`, `"SIGHUP: accounts reloaded"`)
	serveDone := make(chan error, 1)
	go func() {
		serveDone <- serve(ctx, cfg, zerolog.New(reloaded).Level(zerolog.InfoLevel))
	}()
	defer func() {
		cancel()
		require.NoError(t, <-serveDone)
	}()
	base := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, time.Minute, 50*time.Millisecond, "console up")

	assert.Equal(t, http.StatusSeeOther, login(t, base, "supervisor", "demo"), "the demo login, no account yet")
	assert.Equal(t, http.StatusUnauthorized, login(t, base, "anna", "correct horse battery"))

	a, _, err := supervisors.New("anna", supervisors.RoleSupervisor, "correct horse battery")
	require.NoError(t, err)
	list := &supervisors.List{}
	require.NoError(t, list.Add(a))
	require.NoError(t, list.Save(filepath.Join(cfg.DataDir, supervisors.FileName)))
	assert.Equal(t, http.StatusUnauthorized, login(t, base, "anna", "correct horse battery"), "not before the reload")

	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGHUP))
	// Wait for the reload itself, then log in once. Polling the login
	// (10 s) instead failed under load: a login under -race on a loaded
	// 2-core host takes seconds (bcrypt), so the poll's first login often
	// outlasted the bound alone, or one that read the accounts just
	// before the reload failed a third time, earned the throttle's delay,
	// and the right one after it came too late.
	select {
	case <-reloaded.Seen():
	case <-time.After(time.Minute):
		t.Fatal("no \"SIGHUP: accounts reloaded\" with the new account within a minute of SIGHUP")
	}
	assert.Equal(t, http.StatusSeeOther, login(t, base, "anna", "correct horse battery"), "anna logs in after SIGHUP")
	assert.Equal(t, http.StatusUnauthorized, login(t, base, "supervisor", "demo"), "the demo login ends with the first account")
}
