package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docCommand is a binary's name in the docs: at the start of a code span
// or a code line (after `go run ./cmd/`, a path or a shell prompt), then
// its arguments up to the span's or line's end or a shell operator.
var docCommand = regexp.MustCompile("(?:^|[`\\s/$(])(tabled|tablectl|shoesim|bjsim|tablesim)[ \t]+([^`\\n|;&><]*)")

// docFlag is a flag among those arguments.
var docFlag = regexp.MustCompile(`(?:^|\s|\[)(--?[a-z][a-z0-9-]*)`)

// docRow is a table row whose first cell names a binary (README's
// "Binaries and flags"): the flags in its code spans are that binary's.
var docRow = regexp.MustCompile("(?m)^\\| `(tabled|tablectl|shoesim|bjsim|tablesim)` \\|(.*)$")

// docSpan is a code span.
var docSpan = regexp.MustCompile("`([^`\n]+)`")

// docFlags returns "binary flag" for every flag docs shows with a binary.
func docFlags(doc string) []string {
	doc = strings.ReplaceAll(doc, "\\\n", " ") // a shell line continued
	var out []string
	add := func(name, args string) {
		for _, f := range docFlag.FindAllStringSubmatch(args, -1) {
			out = append(out, name+" "+f[1])
		}
	}
	for _, m := range docCommand.FindAllStringSubmatch(doc, -1) {
		add(m[1], m[2])
	}
	for _, m := range docRow.FindAllStringSubmatch(doc, -1) {
		for _, sp := range docSpan.FindAllStringSubmatch(m[2], -1) {
			if !docCommand.MatchString(sp[1]) { // another binary's command: docCommand's
				add(m[1], sp[1])
			}
		}
	}
	// README's table of tabled's flags: its rows' first cells.
	if i := strings.Index(doc, "`tabled` flags"); i >= 0 {
		inTable := false
		for _, line := range strings.Split(doc[i:], "\n")[1:] {
			if !strings.HasPrefix(line, "|") {
				if inTable {
					break
				}
				continue
			}
			inTable = true
			if sp := docSpan.FindStringSubmatch(strings.SplitN(line, "|", 3)[1]); sp != nil {
				add("tabled", sp[1])
			}
		}
	}
	// docs/simulation.md: SIMFLAGS='...' and the flags it lists in spans.
	if strings.Contains(doc, "cmd/tablesim") {
		for _, m := range regexp.MustCompile(`SIMFLAGS='([^']*)'`).FindAllStringSubmatch(doc, -1) {
			add("tablesim", m[1])
		}
		for _, para := range strings.Split(doc, "\n\n") {
			if !strings.Contains(para, "SIMFLAGS") {
				continue // -race and the like elsewhere are go test's
			}
			for _, sp := range docSpan.FindAllStringSubmatch(para, -1) {
				if regexp.MustCompile(`^-[a-z][a-z-]*( \S+)?$`).MatchString(sp[1]) {
					add("tablesim", sp[1])
				}
			}
		}
	}
	return out
}

// TestDocumentedFlagsExist: every flag README.md, docs/deploy.md and
// docs/simulation.md show with one of the binaries is one its help lists,
// and -h exits 0 (tabled, shoesim, tablesim and bjsim rtp/exact exited 1
// or 2 on -h). tablectl's flags are its commands' (each `tablectl CMD -h`).
func TestDocumentedFlagsExist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every command")
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "build", "-o", bin, "./...")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	help := func(name string, args ...string) string {
		t.Helper()
		c := exec.Command(filepath.Join(bin, name), append(args, "-h")...)
		out, err := c.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Errorf("%s %s -h: exit status %d, want 0", name, strings.Join(args, " "), exit.ExitCode())
		} else {
			require.NoError(t, err)
		}
		return string(out)
	}
	helps := map[string]string{
		"tabled":   help("tabled"),
		"shoesim":  help("shoesim"),
		"tablesim": help("tablesim"),
		"bjsim":    help("bjsim", "rtp") + help("bjsim", "sidebets") + help("bjsim", "exact"),
	}
	var ctl strings.Builder
	for _, c := range [][]string{{"scenario"}, {"supervisor", "add"}, {"status"}, {"pause"}, {"resume"}, {"void"},
		{"correct"}, {"history"}, {"round"}, {"journal", "verify"}, {"journal", "accept-loss"}} {
		ctl.WriteString(help("tablectl", c...))
	}
	helps["tablectl"] = ctl.String() + help("tablectl")

	found := 0
	for _, doc := range []string{"../../README.md", "../../docs/deploy.md", "../../docs/simulation.md"} {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		missing := map[string]bool{}
		for _, nf := range docFlags(string(b)) {
			name, f, _ := strings.Cut(nf, " ")
			flag := strings.TrimLeft(f, "-")
			found++
			if flag == "h" || flag == "help" || flag == "version" {
				continue // the flag package's, and every binary's --version (TestVersion)
			}
			if !regexp.MustCompile(`(?m)^\s+-`+regexp.QuoteMeta(flag)+`\b`).MatchString(helps[name]) &&
				!strings.Contains(helps[name], "--"+flag) {
				missing[nf] = true
			}
		}
		var list []string
		for k := range missing {
			list = append(list, k)
		}
		sort.Strings(list)
		assert.Empty(t, list, "%s names flags the binaries do not have", doc)
	}
	assert.Greater(t, found, 60, "the docs' commands were not found: the pattern is wrong")
}
