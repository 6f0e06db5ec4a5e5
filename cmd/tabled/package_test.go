package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestPackageContents: every file deploy/package/nfpm.yaml puts in the
// .deb exists in the repository (a renamed file would break make package
// only), the scripts are executable, and the unit starts the binary where
// the package installs it.
func TestPackageContents(t *testing.T) {
	b, err := os.ReadFile("../../deploy/package/nfpm.yaml")
	require.NoError(t, err)
	var cfg struct {
		Contents []struct {
			Src, Dst, Type string
		} `yaml:"contents"`
		Scripts map[string]string `yaml:"scripts"`
	}
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	dsts := map[string]bool{}
	for _, c := range cfg.Contents {
		dsts[c.Dst] = true
		if c.Type == "dir" || strings.Contains(c.Src, "${PKG_DIR}") {
			continue // the binaries are built by make package
		}
		_, err := os.Stat(filepath.Join("../..", c.Src))
		assert.NoError(t, err, "nfpm.yaml packs %s", c.Src)
	}
	for _, bin := range []string{"/usr/bin/tabled", "/usr/bin/tablectl", "/lib/systemd/system/tabled@.service"} {
		assert.True(t, dsts[bin], "the package has no %s", bin)
	}
	require.NotEmpty(t, cfg.Scripts)
	for _, s := range cfg.Scripts {
		fi, err := os.Stat(filepath.Join("../..", s))
		if assert.NoError(t, err) {
			assert.NotZero(t, fi.Mode()&0o111, "%s is not executable", s)
		}
	}
	unit, err := os.ReadFile("../../deploy/systemd/tabled.service")
	require.NoError(t, err)
	assert.Contains(t, string(unit), "\nExecStart=/usr/bin/tabled ")
}

// TestUnitVerifies runs systemd-analyze verify on the unit as the package
// installs it (tabled@.service), with ExecStart pointing at an executable
// that exists here: systemd must have nothing to say (it once warned
// about StartLimitIntervalSec in [Service]).
func TestUnitVerifies(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed")
	}
	unit, err := os.ReadFile("../../deploy/systemd/tabled.service")
	require.NoError(t, err)
	dir := t.TempDir()
	exe := filepath.Join(dir, "tabled")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	path := filepath.Join(dir, "tabled@.service")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/bin/tabled", exe)), 0o644))
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Empty(t, strings.TrimSpace(string(out)))
}

// TestBuildsForEveryBoard compiles every command for the 32-bit Pi
// (linux/arm v7), as make build and make package do: an untyped constant
// beyond 32 bits (simulators/world's "never" power cut, 1 << 40) built on
// amd64 and broke make package on armhf only. The 64-bit boards share
// amd64's int size; the tests themselves compile for amd64.
func TestBuildsForEveryBoard(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles every command")
	}
	cmd := exec.Command("go", "build", "-tags", "production", "-o", t.TempDir(), "./...")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm", "GOARM=7")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "GOARCH=arm GOARM=7 go build -tags production ./cmd/...:\n%s", out)
}
