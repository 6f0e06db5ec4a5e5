package table

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDependencyRules checks architecture.md's rules mechanically: the pure
// core imports nothing that does I/O, the protocol packages only the card
// values and the standard library, and no production package imports a
// simulator.
func TestDependencyRules(t *testing.T) {
	const mod = "github.com/livetable/livetable/"
	// Libraries that do I/O must not be reached at all; the standard
	// library's I/O packages must not be imported directly (fmt reaches os
	// by itself, which is harmless).
	ioLibs := []string{"go.bug.st/serial", "periph.io/x/host/v3", "github.com/eclipse/paho.mqtt.golang",
		"github.com/rs/zerolog", "github.com/mochi-mqtt/server/v2", "github.com/creack/pty"}
	ioStd := []string{"os", "os/exec", "net", "net/http", "syscall", "io/ioutil", "math/rand", "math/rand/v2"}
	pure := []string{"table/card", "table/rules", "table/round", "table/sidebets", "table/strategy"}
	for _, pkg := range pure {
		deps := goListDeps(t, mod+pkg)
		for _, bad := range ioLibs {
			assert.NotContains(t, deps, bad, "%s must not depend on %s", pkg, bad)
		}
		out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, mod+pkg).Output()
		require.NoError(t, err)
		imports := strings.Fields(string(out))
		for _, bad := range ioStd {
			assert.NotContains(t, imports, bad, "%s must not import %s", pkg, bad)
		}
	}
	for _, pkg := range []string{"firmware-protocols/shoeproto", "firmware-protocols/shufflerproto"} {
		for _, d := range goListDeps(t, mod+pkg) {
			if strings.HasPrefix(d, mod) && d != mod+pkg && d != mod+"table/card" {
				t.Errorf("%s imports %s: protocols import only table/card and the standard library", pkg, d)
			}
			if strings.Contains(d, ".") && !strings.HasPrefix(d, mod) && !strings.HasPrefix(d, "vendor/") && !strings.HasPrefix(d, "golang.org/x/") {
				t.Errorf("%s imports %s: protocols import only table/card and the standard library", pkg, d)
			}
		}
	}
	deps := goListDeps(t, mod+"table")
	for _, bad := range []string{"shoereader", "shuffler", "studio/mqttlink", "studio/light", "studio/console"} {
		assert.NotContains(t, deps, mod+bad, "table must not import %s", bad)
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"...").Output()
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], mod+"simulators") || strings.HasPrefix(f[0], mod+"cmd/") {
			continue
		}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, mod+"simulators") {
				t.Errorf("production package %s imports %s", f[0], imp)
			}
		}
	}
}

func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	require.NoError(t, err, "go list -deps %s", pkg)
	return strings.Fields(string(out))
}

// TestPackageDocs: every package of the module has a package comment
// (house style rule 14).
func TestPackageDocs(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	var dirs []string
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "var" || name == "dist") {
			return filepath.SkipDir
		}
		dirs = append(dirs, path)
		return nil
	})
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		documented := map[string]bool{} // package name -> has a doc comment
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				continue
			}
			pkg := f.Name.Name
			documented[pkg] = documented[pkg] || (f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "")
		}
		rel, _ := filepath.Rel(root, dir)
		for pkg, ok := range documented {
			assert.True(t, ok, "package %s (%s) has no package comment", pkg, rel)
		}
	}
}
