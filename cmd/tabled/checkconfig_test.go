package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestCheckConfig: --check-config takes the file and the flags through
// the checks a start makes and says whether a start would take them (exit
// 0 and what it would run) or not (exit 2 and why), without creating the
// data directory or starting anything: an operator runs the new build's
// check on the file in place before an upgrade, while the table plays.
func TestCheckConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		yaml  string
		flags []string
		code  int
		out   string
	}{
		{"a plain table", "", nil, 0, "configuration OK: "},
		{"no shoe", "shoe: {path: \"\"}\n", nil, 2, "shoe.path: no shoe configured"},
		{"a player's decision window of 1ns", "timing: {decision: 1ns}\n", nil, 2, "timing.decision 1ns is out of range"},
		{"seats past the rule set's", "demo: {enabled: true, seats: 99}\n", nil, 2, "demo.seats"},
		{"a currency that is none", "console: {currency: XXXX}\n", nil, 2, "console.currency"},
		{"an unknown key", "timming: {decision: 5s}\n", nil, 2, "timming"},
		{"a table id that is no topic level", "", []string{"--table", "t/1"}, 2, "table"},
		{"an unknown game by flag", "", []string{"--game", "009"}, 2, "009"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "t1.yaml")
			data := filepath.Join(dir, "data")
			body := "studio: s1\ntable: t1\ngame: \"000\"\ndata_dir: " + data + "\n" + withShoe(tc.yaml)
			require.NoError(t, os.WriteFile(conf, []byte(body), 0o644))
			var stdout, stderr strings.Builder
			code := run(append([]string{"--config", conf, "--check-config"}, tc.flags...), &stdout, &stderr)
			assert.Equal(t, tc.code, code, "stdout %s\nstderr %s", stdout.String(), stderr.String())
			assert.Contains(t, stdout.String()+stderr.String(), tc.out)
			_, err := os.Stat(data)
			assert.True(t, os.IsNotExist(err), "--check-config created the data directory")
		})
	}
	// The example file as shipped: its data_dir is left alone too (its
	// shoe, /dev/ttyACM0, is not plugged in here: a warning).
	var stdout, stderr strings.Builder
	require.Equal(t, 0, run([]string{"--config", "tabled.example.yaml", "--check-config"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "configuration OK: tabled.example.yaml: studio studio1, table table1, game 000")
}

// TestCheckConfigOpensFiles: --check-config opens, read-only, what a
// start opens and fails on (it used to pass them, and the start after
// the upgrade failed): the console's and the broker's TLS files, the
// accounts file, the shoe's device. Each broken one exits 2 naming its
// key; a shoe not plugged in now is a warning (a start waits for it);
// nothing is created or modified.
func TestCheckConfigOpensFiles(t *testing.T) {
	dir := t.TempDir()
	ca := mqttlinktest.NewCA(t, dir, "studio-ca")
	cert, key := ca.Issue(t, "t1", true)
	junk := filepath.Join(dir, "junk.pem")
	require.NoError(t, os.WriteFile(junk, []byte("not a certificate\n"), 0o644))
	badAccounts := filepath.Join(dir, "supervisors-bad.yaml")
	require.NoError(t, os.WriteFile(badAccounts, []byte("supervisors: [{name: anna, role: supervisor, hash: nope}]\n"), 0o640))
	unreadable := filepath.Join(dir, "supervisors-locked.yaml")
	require.NoError(t, os.WriteFile(unreadable, []byte("supervisors: []\n"), 0o000))
	regular := filepath.Join(dir, "ttyACM0")
	require.NoError(t, os.WriteFile(regular, nil, 0o644))
	broker := "broker: {url: ssl://mqtt.example:8883, ca_file: %s, cert_file: %s, key_file: %s}\n"
	for _, tc := range []struct {
		name string
		yaml string
		code int
		out  string
	}{
		{"every file good", "console: {addr: 10.0.0.5:8443, tls_cert: " + cert + ", tls_key: " + key + "}\n" +
			fmt.Sprintf(broker, ca.CertFile, cert, key), 0, "configuration OK"},
		{"console certificate missing", "console: {tls_cert: " + filepath.Join(dir, "gone.pem") + ", tls_key: " + key + "}\n", 2, "console.tls_cert"},
		{"console key not a key", "console: {tls_cert: " + cert + ", tls_key: " + junk + "}\n", 2, "console.tls_key"},
		{"console off: its files unread", "console: {addr: \"off\", tls_cert: " + junk + ", tls_key: " + junk + "}\n", 0, "configuration OK"},
		{"broker CA file missing", fmt.Sprintf(broker, filepath.Join(dir, "gone.pem"), cert, key), 2, "broker.ca_file"},
		{"broker CA file without a certificate", fmt.Sprintf(broker, junk, cert, key), 2, "broker.ca_file"},
		{"broker client key wrong", fmt.Sprintf(broker, ca.CertFile, cert, junk), 2, "broker.cert_file, broker.key_file"},
		{"broker client certificate without its key", "broker: {url: ssl://mqtt.example:8883, cert_file: " + cert + "}\n", 2, "broker.cert_file and broker.key_file"},
		{"accounts file broken", "console: {supervisors_file: " + badAccounts + "}\n", 2, "console.supervisors_file"},
		{"accounts file missing: none yet", "console: {supervisors_file: " + filepath.Join(dir, "none.yaml") + "}\n", 0, "configuration OK"},
		{"shoe path a regular file", "shoe: {path: " + regular + "}\n", 2, "shoe.path " + regular + " is not a character device"},
		{"shoe not plugged in", "shoe: {path: " + filepath.Join(dir, "ttyACM9") + "}\n", 0, "warning: shoe.path " + filepath.Join(dir, "ttyACM9") + " does not exist now"},
		{"demo: its own shoe", "demo: {enabled: true}\nshoe: {path: " + regular + "}\n", 0, "configuration OK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "t1.yaml")
			data := filepath.Join(t.TempDir(), "data")
			body := "studio: s1\ntable: t1\ngame: \"000\"\ndata_dir: " + data + "\n" + withShoe(tc.yaml)
			require.NoError(t, os.WriteFile(conf, []byte(body), 0o644))
			before := snapshotDir(t, dir)
			var stdout, stderr strings.Builder
			code := run([]string{"--config", conf, "--check-config"}, &stdout, &stderr)
			assert.Equal(t, tc.code, code, "stdout %s\nstderr %s", stdout.String(), stderr.String())
			assert.Contains(t, stdout.String()+stderr.String(), tc.out)
			_, err := os.Stat(data)
			assert.True(t, os.IsNotExist(err), "--check-config created the data directory")
			assert.Equal(t, before, snapshotDir(t, dir), "--check-config changed a file")
		})
	}
	if os.Getuid() != 0 { // root reads any file
		var stdout, stderr strings.Builder
		conf := filepath.Join(t.TempDir(), "t1.yaml")
		require.NoError(t, os.WriteFile(conf, []byte("shoe: {path: /dev/null}\nconsole: {supervisors_file: "+unreadable+"}\n"), 0o644))
		assert.Equal(t, 2, run([]string{"--config", conf, "--check-config"}, &stdout, &stderr))
		assert.Contains(t, stderr.String(), "console.supervisors_file")
	}
}

// snapshotDir is every file's name, size, mode and modification time
// under dir.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%d %s %s", fi.Size(), fi.Mode(), fi.ModTime())
		return nil
	}))
	return out
}

// withShoe adds /dev/null as the shoe's device (a character device anyone
// may read and write, standing in for the serial line) to a
// configuration that names none.
func withShoe(yaml string) string {
	if strings.Contains(yaml, "shoe:") {
		return yaml
	}
	return "shoe: {path: /dev/null}\n" + yaml
}
