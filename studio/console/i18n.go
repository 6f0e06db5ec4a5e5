package console

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Languages are the console's languages, the first the default. Every
// word the dealer and supervisor pages show is in one catalogue per
// language, assets/i18n/{lang}.json (TestCatalogues checks that none is
// missing from either).
var Languages = []string{"en", "it"}

// langCookie keeps a browser's chosen language.
const langCookie = "livetable_lang"

// catalogues holds each language's catalogue, parsed and as the JSON the
// pages carry.
type catalogues struct {
	text map[string]map[string]string
	json map[string]string
}

func loadCatalogues(st fs.FS) (*catalogues, error) {
	c := &catalogues{text: map[string]map[string]string{}, json: map[string]string{}}
	for _, l := range Languages {
		b, err := fs.ReadFile(st, "i18n/"+l+".json")
		if err != nil {
			return nil, fmt.Errorf("console: catalogue %s: %w", l, err)
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("console: catalogue %s: %w", l, err)
		}
		compact, _ := json.Marshal(m)
		c.text[l], c.json[l] = m, string(compact)
	}
	return c, nil
}

// t is the catalogue's text for key in lang, with {0}, {1}... filled in.
func (c *catalogues) t(lang, key string, args ...any) string {
	s, ok := c.text[lang][key]
	if !ok {
		s = key
	}
	for i, a := range args {
		s = strings.ReplaceAll(s, fmt.Sprintf("{%d}", i), fmt.Sprint(a))
	}
	return s
}

// pickLang is the request's language: ?lang= (remembered in a cookie),
// else the cookie, else the browser's Accept-Language, else English.
func (s *Server) pickLang(w http.ResponseWriter, r *http.Request) string {
	if l := r.URL.Query().Get("lang"); slices.Contains(Languages, l) {
		http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: "/", MaxAge: 365 * 24 * 3600,
			HttpOnly: true, Secure: s.auth.secure, SameSite: http.SameSiteStrictMode})
		return l
	}
	if c, err := r.Cookie(langCookie); err == nil && slices.Contains(Languages, c.Value) {
		return c.Value
	}
	return acceptLanguage(r.Header.Get("Accept-Language"))
}

// acceptLanguage picks the first of Languages in an Accept-Language
// header's order of preference ("it-IT,it;q=0.9,en;q=0.8"), by primary
// subtag; English when none is offered.
func acceptLanguage(h string) string {
	type pref struct {
		lang string
		q    float64
	}
	var prefs []pref
	for _, part := range strings.Split(h, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		primary, _, _ := strings.Cut(strings.ToLower(tag), "-")
		prefs = append(prefs, pref{primary, q})
	}
	sort.SliceStable(prefs, func(i, j int) bool { return prefs[i].q > prefs[j].q })
	for _, p := range prefs {
		if p.q > 0 && slices.Contains(Languages, p.lang) {
			return p.lang
		}
	}
	return Languages[0]
}

// pageData is what every page template gets besides its own fields.
type pageData struct {
	Lang     string
	Langs    []string
	Catalog  string // the language's catalogue, JSON, for the page's scripts
	Currency string
	T        map[string]string
}

func (s *Server) pageData(w http.ResponseWriter, r *http.Request) pageData {
	l := s.pickLang(w, r)
	return pageData{Lang: l, Langs: Languages, Catalog: s.i18n.json[l], Currency: s.opts.Currency, T: s.i18n.text[l]}
}
