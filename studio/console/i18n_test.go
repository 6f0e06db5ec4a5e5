package console

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
)

// keyRE finds catalogue keys in the pages and scripts: data-t="k",
// data-t-placeholder="k", {{index .T "k"}}, and any quoted string shaped
// like a key of one of the catalogue's namespaces (LT.t("k"), arrays of
// keys for table heads).
var keyRE = regexp.MustCompile(`"([a-z_]+(?:\.[a-z0-9_]+)+)"`)

func TestCatalogues(t *testing.T) {
	pg, err := loadPages()
	require.NoError(t, err)
	cat, err := loadCatalogues(pg.static)
	require.NoError(t, err)
	en := cat.text[Languages[0]]
	namespaces := map[string]bool{}
	for k := range en {
		ns, _, _ := strings.Cut(k, ".")
		namespaces[ns] = true
	}

	// The same keys in every language, none empty.
	for _, l := range Languages {
		for k, v := range cat.text[l] {
			assert.NotEmpty(t, strings.TrimSpace(v), "%s: %s is empty", l, k)
			for _, other := range Languages {
				_, ok := cat.text[other][k]
				assert.True(t, ok, "%s has %q, %s does not", l, k, other)
			}
		}
	}

	// Every key the pages and scripts use is in the catalogues.
	used := map[string]bool{}
	require.NoError(t, fs.WalkDir(pg.static, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".js") || strings.HasSuffix(path, ".html")) {
			return err
		}
		b, err := fs.ReadFile(pg.static, path)
		if err != nil {
			return err
		}
		for _, m := range keyRE.FindAllStringSubmatch(string(b), -1) {
			ns, _, _ := strings.Cut(m[1], ".")
			if !namespaces[ns] {
				continue // a string that only looks like a key (a file name)
			}
			used[m[1]] = true
			for _, l := range Languages {
				_, ok := cat.text[l][m[1]]
				assert.True(t, ok, "%s uses %q, missing from %s.json", path, m[1], l)
			}
		}
		return nil
	}))
	// And the Go side's (the login page's errors).
	for _, k := range []string{"login.expired", "login.wait", "login.wrong"} {
		used[k] = true
	}

	// The keys built from data: every phase, every outcome of the wire
	// contract, the alarm codes of the shoe and the table.
	phases := []table.Phase{table.PhaseIdle, table.PhaseBetting, table.PhaseLastCall, table.PhaseDealing,
		table.PhaseSettled, table.PhasePaused, table.PhaseClosed}
	outcomes := []string{"blackjack", "win", "push", "lose", "bust", "charlie", "surrender", "void"}
	alarms := []string{"misread", "double_card", "jam", "face_up", "unknown_card", "device_fault", "disconnected",
		"silent", "connected", "alive", "integrity_alarm", "shuffle_alarm", "device_refused", "unexpected_card", "card_while_paused", "card_set_aside",
		"torn_tail", "seq_gap", "shuffler", "shuffler.reset", "cut_card", "other"}
	var want []string
	for _, p := range phases {
		want = append(want, "phase."+string(p))
	}
	for _, o := range outcomes {
		want = append(want, "outcome."+o)
	}
	for _, a := range alarms {
		want = append(want, "alarm."+a)
	}
	for _, k := range want {
		used[k] = true
		for _, l := range Languages {
			_, ok := cat.text[l][k]
			assert.True(t, ok, "%q missing from %s.json", k, l)
		}
	}

	// No key is left unused.
	var unused []string
	for k := range en {
		if !used[k] {
			unused = append(unused, k)
		}
	}
	sort.Strings(unused)
	assert.Empty(t, unused, "keys no page uses")
}

func TestLanguageChoice(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct {
		name, query, accept, cookie, want string
	}{
		{"default", "", "", "", "en"},
		{"browser prefers Italian", "", "it-IT,it;q=0.9,en;q=0.8", "", "it"},
		{"browser prefers English", "", "en-GB,it;q=0.5", "", "en"},
		{"by quality", "", "fr;q=1,en;q=0.3,it;q=0.7", "", "it"},
		{"unknown only", "", "de-DE", "", "en"},
		{"switch", "?lang=it", "en", "", "it"},
		{"cookie beats browser", "", "en", "it", "it"},
		{"unknown switch ignored", "?lang=xx", "it", "", "it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/"+tc.query, nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Language", tc.accept)
			}
			if tc.cookie != "" {
				req.AddCookie(&http.Cookie{Name: langCookie, Value: tc.cookie})
			}
			rec := httptest.NewRecorder()
			f.s.Handler().ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code)
			assert.Contains(t, rec.Body.String(), `<html lang="`+tc.want+`"`)
			if tc.query == "?lang=it" {
				assert.Contains(t, rec.Header().Get("Set-Cookie"), langCookie+"=it", "the switch is remembered")
			}
		})
	}
	// The login page's own words are the catalogue's.
	req := httptest.NewRequest(http.MethodGet, "/login?lang=it", nil)
	rec := httptest.NewRecorder()
	f.s.Handler().ServeHTTP(rec, req)
	assert.Contains(t, rec.Body.String(), "Accesso supervisore")
	assert.Contains(t, rec.Body.String(), "Accedi")
}
