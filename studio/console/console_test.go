package console

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/livetable/livetable/studio/console/consoletest"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

var epoch = time.Date(2026, 11, 22, 0, 29, 37, 0, time.UTC)

const (
	testUser     = "anna"
	testPassword = "correct horse battery staple"
)

// testHash is a bcrypt hash at the lowest cost: the tests check the flow,
// not bcrypt's speed.
func testHash(t testing.TB, pw string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	require.NoError(t, err)
	return string(h)
}

// dealingState is a snapshot in the middle of a round.
func dealingState() table.State {
	return table.State{
		Seq: 7, Table: "table1", Game: "000", Phase: table.PhaseDealing,
		Round: round.View{
			ID: "#00:29:37", Phase: "dealing", Next: "card to seat 2",
			Dealer: round.HandView{Cards: []card.Card{card.MustParse("9c")}, Total: 9},
			Seats: []round.SeatView{
				{Seat: 1, Player: "p1", Players: 1, Bet: 500, Cards: []card.Card{card.MustParse("2d"), card.MustParse("As")},
					Hands: []round.HandView{{Cards: []card.Card{card.MustParse("2d"), card.MustParse("As")}, Total: 13, Soft: true, Stake: 500}}},
				{Seat: 2, Player: "p2", Players: 1, Bet: 400, Cards: []card.Card{card.MustParse("Ah")},
					Hands: []round.HandView{{Cards: []card.Card{card.MustParse("Ah")}, Total: 11, Soft: true, Stake: 400}}},
			},
		},
		Shoe: table.ShoeState{ID: "shoe-1", Decks: 8, Dealt: 5},
	}
}

type fixture struct {
	s    *Server
	fake *consoletest.Table
	clk  *clockwork.FakeClock
	web  *httptest.Server
	h    Health
}

func newFixture(t testing.TB, mod func(*Options)) *fixture {
	t.Helper()
	f := &fixture{fake: consoletest.New(dealingState()), clk: clockwork.NewFakeClockAt(epoch)}
	opts := DefaultOptions()
	opts.Addr = "127.0.0.1:0" // never a fixed port: a demo may be running
	opts.Clock = f.clk
	opts.GameName = "Live Blackjack"
	opts.Supervisors = map[string]string{testUser: testHash(t, testPassword)}
	if mod != nil {
		mod(&opts)
	}
	s, err := New(opts, f.fake, nil, func() Health { return f.h }, zerolog.Nop())
	require.NoError(t, err)
	f.s = s
	f.web = httptest.NewServer(s.Handler())
	t.Cleanup(f.web.Close)
	return f
}

// browser is an HTTP client with cookies that does not follow redirects,
// so the tests see them.
func (f *fixture) browser(t testing.TB) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var (
	formToken = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	metaToken = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)
)

func body(t testing.TB, r *http.Response) string {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	return string(b)
}

// login fills the login form as a browser would and returns the response.
func (f *fixture) login(t testing.TB, c *http.Client, user, pw string) *http.Response {
	t.Helper()
	r, err := c.Get(f.web.URL + "/login")
	require.NoError(t, err)
	m := formToken.FindStringSubmatch(body(t, r))
	require.Len(t, m, 2, "login form has a CSRF token")
	req, err := http.NewRequest(http.MethodPost, f.web.URL+"/login",
		strings.NewReader(url.Values{"user": {user}, "password": {pw}, "csrf": {m[1]}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.web.URL)
	resp, err := c.Do(req)
	require.NoError(t, err)
	return resp
}

// supervisor logs in and returns the client and the page's CSRF token.
func (f *fixture) supervisor(t testing.TB) (*http.Client, string) {
	t.Helper()
	c := f.browser(t)
	resp := f.login(t, c, testUser, testPassword)
	body(t, resp)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	r, err := c.Get(f.web.URL + "/supervisor")
	require.NoError(t, err)
	page := body(t, r)
	require.Equal(t, http.StatusOK, r.StatusCode)
	m := metaToken.FindStringSubmatch(page)
	require.Len(t, m, 2)
	return c, m[1]
}

func (f *fixture) command(t *testing.T, c *http.Client, token, origin string, req CommandRequest) (int, apiError) {
	t.Helper()
	b, err := json.Marshal(req)
	require.NoError(t, err)
	hr, err := http.NewRequest(http.MethodPost, f.web.URL+"/api/command", strings.NewReader(string(b)))
	require.NoError(t, err)
	hr.Header.Set("Content-Type", "application/json")
	if token != "" {
		hr.Header.Set(csrfHeader, token)
	}
	if origin != "" {
		hr.Header.Set("Origin", origin)
	}
	resp, err := c.Do(hr)
	require.NoError(t, err)
	var e apiError
	_ = json.Unmarshal([]byte(body(t, resp)), &e)
	return resp.StatusCode, e
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		t    Table
		sup  map[string]string
		want error
	}{
		{"no table", nil, nil, ErrNoTable},
		{"bad hash", consoletest.New(table.State{}), map[string]string{"x": "plaintext"}, ErrBadHash},
		{"ok", consoletest.New(table.State{}), map[string]string{"x": testHash(t, "pw")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Supervisors = tt.sup
			_, err := New(opts, tt.t, nil, nil, zerolog.Nop())
			if tt.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.want)
			}
		})
	}
}

func TestLogin(t *testing.T) {
	tests := []struct {
		name     string
		user, pw string
		want     int
	}{
		{"right password", testUser, testPassword, http.StatusSeeOther},
		{"wrong password", testUser, "hunter2", http.StatusUnauthorized},
		{"unknown user", "mallory", testPassword, http.StatusUnauthorized},
		{"empty password", testUser, "", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			c := f.browser(t)
			resp := f.login(t, c, tt.user, tt.pw)
			page := body(t, resp)
			assert.Equal(t, tt.want, resp.StatusCode)
			if tt.want != http.StatusSeeOther {
				assert.Contains(t, page, "Wrong name or password")
				r, err := c.Get(f.web.URL + "/supervisor")
				require.NoError(t, err)
				body(t, r)
				assert.Equal(t, http.StatusSeeOther, r.StatusCode)
				assert.Equal(t, "/login", r.Header.Get("Location"))
				return
			}
			assert.Equal(t, "/supervisor", resp.Header.Get("Location"))
			var sc *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == sessionCookie {
					sc = c
				}
			}
			require.NotNil(t, sc, "session cookie set")
			assert.True(t, sc.HttpOnly)
			assert.Equal(t, http.SameSiteStrictMode, sc.SameSite)
			r, err := c.Get(f.web.URL + "/supervisor")
			require.NoError(t, err)
			page = body(t, r)
			assert.Equal(t, http.StatusOK, r.StatusCode)
			assert.Contains(t, page, "<b id=\"user\">anna</b>")
			assert.Contains(t, r.Header.Get("Content-Security-Policy"), "script-src 'self'")
		})
	}
}

func TestLoginNeedsFormToken(t *testing.T) {
	f := newFixture(t, nil)
	c := f.browser(t)
	resp, err := c.PostForm(f.web.URL+"/login", url.Values{"user": {testUser}, "password": {testPassword}, "csrf": {"forged"}})
	require.NoError(t, err)
	body(t, resp)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// loginFrom posts a login as if from addr (the test server's clients are
// all 127.0.0.1) and returns the status code and the page.
func (f *fixture) loginFrom(t *testing.T, addr, user, pw string) (int, string) {
	t.Helper()
	get := httptest.NewRequest(http.MethodGet, "/login", nil)
	get.RemoteAddr = addr + ":40000"
	rec := httptest.NewRecorder()
	f.s.Handler().ServeHTTP(rec, get)
	m := formToken.FindStringSubmatch(rec.Body.String())
	require.Len(t, m, 2, "login form has a CSRF token")
	post := httptest.NewRequest(http.MethodPost, "/login",
		strings.NewReader(url.Values{"user": {user}, "password": {pw}, "csrf": {m[1]}}.Encode()))
	post.RemoteAddr = addr + ":40001"
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range rec.Result().Cookies() {
		post.AddCookie(c)
	}
	rec = httptest.NewRecorder()
	f.s.Handler().ServeHTTP(rec, post)
	return rec.Code, rec.Body.String()
}

func TestLoginThrottle(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.LoginAttempts, o.LoginWindow = 3, time.Minute })
	const guesser, desk = "10.0.0.66", "10.0.0.7"
	for i := range 3 {
		code, _ := f.loginFrom(t, guesser, testUser, fmt.Sprintf("guess %d", i))
		require.Equal(t, http.StatusUnauthorized, code, "free failure %d", i)
	}
	// The third failure earned the guesser a wait: even the right
	// password is not looked at from there.
	code, page := f.loginFrom(t, guesser, testUser, testPassword)
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.Contains(t, page, "wait 1 s")
	// From another address the right password works at once.
	code, _ = f.loginFrom(t, desk, testUser, testPassword)
	assert.Equal(t, http.StatusSeeOther, code)

	// Each further failure doubles the guesser's wait, up to LoginWindow.
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		f.clk.Advance(wait)
		code, _ = f.loginFrom(t, guesser, testUser, "again")
		require.Equal(t, http.StatusUnauthorized, code)
		code, page = f.loginFrom(t, guesser, testUser, testPassword)
		require.Equal(t, http.StatusTooManyRequests, code, "after waiting %s", wait)
		assert.Contains(t, page, fmt.Sprintf("wait %d s", int(2*wait/time.Second)))
	}
	code, _ = f.loginFrom(t, desk, testUser, testPassword)
	assert.Equal(t, http.StatusSeeOther, code, "six failures from one address never lock the account out elsewhere")

	// Once the wait is over the right password works from the guesser's
	// address too.
	f.clk.Advance(8 * time.Second)
	code, _ = f.loginFrom(t, guesser, testUser, testPassword)
	assert.Equal(t, http.StatusSeeOther, code)
}

func TestLoginThrottleManyAddresses(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.LoginAttempts, o.LoginWindow = 3, 5*time.Minute })
	// Twenty failures from twenty addresses: the account itself is now
	// slowed, by a second, growing to at most 30 s, never locked.
	for i := range 20 {
		code, _ := f.loginFrom(t, fmt.Sprintf("10.1.0.%d", i+1), testUser, "guess")
		require.Equal(t, http.StatusUnauthorized, code)
	}
	code, _ := f.loginFrom(t, "10.0.0.7", testUser, testPassword)
	assert.Equal(t, http.StatusTooManyRequests, code)
	f.clk.Advance(time.Second)
	code, _ = f.loginFrom(t, "10.0.0.7", testUser, testPassword)
	assert.Equal(t, http.StatusSeeOther, code)
	for i := range 20 {
		f.loginFrom(t, fmt.Sprintf("10.2.0.%d", i+1), testUser, "guess")
		f.clk.Advance(time.Minute)
	}
	assert.LessOrEqual(t, f.s.auth.wait(testUser, "10.0.0.7"), 30*time.Second)
}

func TestViewerMayNotCommand(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.Accounts = testAccounts{"vito": {testHash(t, testPassword), false}}
	})
	c, token := f.supervisorPage(t, "vito")
	code, e := f.command(t, c, token, "", CommandRequest{Command: "pause", Reason: "look"})
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, "viewer", e.Kind)
}

// supervisorPage logs user in (testPassword) and opens the supervisor's
// page: the browser and the page's CSRF token for commands.
func (f *fixture) supervisorPage(t *testing.T, user string) (*http.Client, string) {
	t.Helper()
	c := f.browser(t)
	resp := f.login(t, c, user, testPassword)
	body(t, resp)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	r, err := c.Get(f.web.URL + "/supervisor")
	require.NoError(t, err)
	m := metaToken.FindStringSubmatch(body(t, r))
	require.Len(t, m, 2)
	return c, m[1]
}

type testAccounts map[string]struct {
	hash       string
	canCommand bool
}

func (a testAccounts) PasswordHash(name string) (string, bool, bool) {
	u, ok := a[name]
	return u.hash, u.canCommand, ok
}

func TestInsecureAddress(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		insecure bool
		cert     bool
		ok       bool
	}{
		{"127.0.0.1:0", false, false, true},
		{"localhost:0", false, false, true},
		{"[::1]:0", false, false, true},
		{"0.0.0.0:8080", false, false, false},
		{":8080", false, false, false},
		{"10.0.0.5:8080", false, false, false},
		{"0.0.0.0:8080", true, false, true},
		{"0.0.0.0:8080", false, true, true},
	} {
		opts := DefaultOptions()
		opts.Addr, opts.Insecure = tc.addr, tc.insecure
		if tc.cert {
			opts.TLSCert, opts.TLSKey = "cert.pem", "key.pem"
		}
		_, err := New(opts, consoletest.New(dealingState()), nil, nil, zerolog.Nop())
		if tc.ok {
			assert.NoError(t, err, "%+v", tc)
		} else {
			assert.ErrorIs(t, err, ErrInsecure, "%+v", tc)
		}
	}
}

func TestSessionExpires(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.SessionTTL = time.Hour })
	c, token := f.supervisor(t)
	code, _ := f.command(t, c, token, "", CommandRequest{Command: "resume"})
	require.Equal(t, http.StatusOK, code)
	f.clk.Advance(time.Hour)
	code, e := f.command(t, c, token, "", CommandRequest{Command: "resume"})
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, "unauthorized", e.Kind)
}

func TestLogout(t *testing.T) {
	f := newFixture(t, nil)
	c, token := f.supervisor(t)
	resp, err := c.PostForm(f.web.URL+"/logout", url.Values{"csrf": {token}})
	require.NoError(t, err)
	body(t, resp)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	code, _ := f.command(t, c, token, "", CommandRequest{Command: "resume"})
	assert.Equal(t, http.StatusUnauthorized, code)
}

func TestCSRF(t *testing.T) {
	tests := []struct {
		name   string
		token  func(real string) string
		origin func(base string) string
		want   int
	}{
		{"valid token", func(r string) string { return r }, func(b string) string { return b }, http.StatusOK},
		{"valid token, no origin", func(r string) string { return r }, func(string) string { return "" }, http.StatusOK},
		{"no token", func(string) string { return "" }, func(b string) string { return b }, http.StatusForbidden},
		{"wrong token", func(string) string { return "AAAA" }, func(b string) string { return b }, http.StatusForbidden},
		{"other origin", func(r string) string { return r }, func(string) string { return "http://evil.example" }, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			c, token := f.supervisor(t)
			code, _ := f.command(t, c, tt.token(token), tt.origin(f.web.URL), CommandRequest{Command: "resume"})
			assert.Equal(t, tt.want, code)
			if tt.want != http.StatusOK {
				assert.Empty(t, f.fake.Inputs(), "refused command never reaches the table")
			}
		})
	}
}

func TestCommands(t *testing.T) {
	rule := &round.RuleError{Err: round.ErrIllegalAction, Msg: "not paused"}
	tests := []struct {
		name     string
		req      CommandRequest
		tableErr error
		want     int
		kind     string
		input    table.Input // nil: nothing reaches the table
	}{
		{"pause", CommandRequest{Command: "pause", Reason: " camera down "}, nil, http.StatusOK, "",
			table.Supervisor{Command: "pause", By: testUser, Reason: "camera down"}},
		{"resume", CommandRequest{Command: "resume"}, nil, http.StatusOK, "",
			table.Supervisor{Command: "resume", By: testUser}},
		{"void", CommandRequest{Command: "void", Reason: "dealer error", Round: "#20:15:33"}, nil, http.StatusOK, "",
			table.Supervisor{Command: "void", By: testUser, Reason: "dealer error", Round: "#20:15:33"}},
		// A page older than the round fence, open across an upgrade: its
		// void would act on whatever round is in play when it arrives.
		{"void without the round", CommandRequest{Command: "void", Reason: "dealer error"}, nil, http.StatusBadRequest, "bad_request", nil},
		{"void naming a round that settled", CommandRequest{Command: "void", Reason: "dealer error", Round: "#20:15:33"},
			fmt.Errorf("%w: void names round #20:15:33, and the table's round is #20:15:48: nothing changed", table.ErrWrongRound),
			http.StatusConflict, "wrong_round", table.Supervisor{Command: "void", By: testUser, Reason: "dealer error", Round: "#20:15:33"}},
		{"correct naming its round", CommandRequest{Command: "correct", Card: "Qh", At: 12, Round: "#20:15:33"}, nil, http.StatusOK, "",
			table.Supervisor{Command: "correct", By: testUser, Card: card.MustParse("Qh"), At: 12, Round: "#20:15:33"}},
		{"round on a pause", CommandRequest{Command: "pause", Reason: "r", Round: "#20:15:33"}, nil, http.StatusBadRequest, "bad_request", nil},
		{"round on a resume", CommandRequest{Command: "resume", Round: "#20:15:33"}, nil, http.StatusBadRequest, "bad_request", nil},
		{"correct", CommandRequest{Command: "correct", Card: "Qh"}, nil, http.StatusOK, "",
			table.Supervisor{Command: "correct", By: testUser, Card: card.MustParse("Qh")}},
		{"correct naming its card", CommandRequest{Command: "correct", Card: "Qh", At: 12}, nil, http.StatusOK, "",
			table.Supervisor{Command: "correct", By: testUser, Card: card.MustParse("Qh"), At: 12}},
		{"correct at a negative position", CommandRequest{Command: "correct", Card: "Qh", At: -1}, nil, http.StatusBadRequest, "bad_request", nil},
		{"at on a pause", CommandRequest{Command: "pause", Reason: "r", At: 3}, nil, http.StatusBadRequest, "bad_request", nil},
		{"a card corrected already", CommandRequest{Command: "correct", Card: "Qh", At: 12},
			fmt.Errorf("%w: card 12 of the shoe was corrected already (Qh); the next to correct is card 13 (misread #13): nothing changed", table.ErrMisreadAt),
			http.StatusConflict, "misread_at", table.Supervisor{Command: "correct", By: testUser, Card: card.MustParse("Qh"), At: 12}},
		{"pause without reason", CommandRequest{Command: "pause"}, nil, http.StatusBadRequest, "bad_request", nil},
		{"void without reason", CommandRequest{Command: "void", Reason: "  ", Round: "#20:15:33"}, nil, http.StatusBadRequest, "bad_request", nil},
		{"correct bad card", CommandRequest{Command: "correct", Card: "Xx"}, nil, http.StatusBadRequest, "bad_request", nil},
		{"correct with no card", CommandRequest{Command: "correct", Card: " ", At: 4}, nil, http.StatusBadRequest, "bad_request", nil},
		{"unknown command", CommandRequest{Command: "open"}, nil, http.StatusBadRequest, "bad_request", nil},
		{"table refuses", CommandRequest{Command: "resume"}, rule, http.StatusConflict, "illegal_action",
			table.Supervisor{Command: "resume", By: testUser}},
		{"table paused", CommandRequest{Command: "correct", Card: "Ts"}, fmt.Errorf("%w: camera", table.ErrPaused),
			http.StatusConflict, "paused", table.Supervisor{Command: "correct", By: testUser, Card: card.MustParse("Ts")}},
		{"a misread card on the table", CommandRequest{Command: "resume"}, fmt.Errorf("%w (misread #9): correct it", table.ErrMisreadPending),
			http.StatusConflict, "misread_pending", table.Supervisor{Command: "resume", By: testUser}},
		{"the shoe unplugged", CommandRequest{Command: "resume"}, fmt.Errorf("%w: plug it back in", table.ErrShoeDown),
			http.StatusConflict, "shoe_down", table.Supervisor{Command: "resume", By: testUser}},
		{"table slow", CommandRequest{Command: "resume"}, context.DeadlineExceeded, http.StatusGatewayTimeout, "timeout",
			table.Supervisor{Command: "resume", By: testUser}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			if tt.tableErr != nil {
				f.fake.FailWith(func(table.Input) error { return tt.tableErr })
			}
			c, token := f.supervisor(t)
			code, e := f.command(t, c, token, f.web.URL, tt.req)
			assert.Equal(t, tt.want, code)
			assert.Equal(t, tt.kind, e.Kind)
			if tt.tableErr != nil {
				assert.Equal(t, tt.tableErr.Error(), e.Error, "the table's error is shown as it came")
			}
			if tt.input == nil {
				assert.Empty(t, f.fake.Inputs())
			} else {
				assert.Equal(t, []table.Input{tt.input}, f.fake.Inputs())
			}
		})
	}
}

func TestSupervisorOnly(t *testing.T) {
	f := newFixture(t, nil)
	c := f.browser(t)
	for _, path := range []string{"/api/recall", "/api/round?code=x", "/api/alarms", "/api/health"} {
		r, err := c.Get(f.web.URL + path)
		require.NoError(t, err)
		body(t, r)
		assert.Equal(t, http.StatusUnauthorized, r.StatusCode, path)
	}
	code, _ := f.command(t, c, "x", "", CommandRequest{Command: "pause", Reason: "x"})
	assert.Equal(t, http.StatusUnauthorized, code)
	r, err := c.Get(f.web.URL + "/supervisor")
	require.NoError(t, err)
	body(t, r)
	assert.Equal(t, http.StatusSeeOther, r.StatusCode)
}

func TestPublicPages(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		path, contains, ctype string
	}{
		{"/", `id="instruction"`, "text/html"},
		{"/static/console.css", ".instruction", "text/css"},
		{"/static/dealer.js", "LT.connect", "javascript"},
		{"/static/common.js", "EventSource", "javascript"},
		{"/api/state", `"next":"card to seat 2"`, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r, err := http.Get(f.web.URL + tt.path)
			require.NoError(t, err)
			b := body(t, r)
			assert.Equal(t, http.StatusOK, r.StatusCode)
			assert.Contains(t, b, tt.contains)
			assert.Contains(t, r.Header.Get("Content-Type"), tt.ctype)
		})
	}
	r, err := http.Get(f.web.URL + "/static/nothing.js")
	require.NoError(t, err)
	body(t, r)
	assert.Equal(t, http.StatusNotFound, r.StatusCode)
}

func TestHealthz(t *testing.T) {
	tests := []struct {
		name   string
		health Health
		want   int
		ok     bool
	}{
		{"no checks", Health{}, http.StatusOK, true},
		{"all ok", Health{Checks: []Check{{Name: CheckShoe, OK: true}, {Name: CheckBroker, OK: true}}}, http.StatusOK, true},
		{"broker down", Health{Checks: []Check{{Name: CheckShoe, OK: true}, {Name: CheckBroker, Detail: "connection refused"}}},
			http.StatusServiceUnavailable, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.h = tt.health
			r, err := http.Get(f.web.URL + "/healthz")
			require.NoError(t, err)
			var got struct {
				OK     bool    `json:"ok"`
				Checks []Check `json:"checks"`
			}
			require.NoError(t, json.Unmarshal([]byte(body(t, r)), &got))
			assert.Equal(t, tt.want, r.StatusCode)
			assert.Equal(t, tt.ok, got.OK)
			assert.Len(t, got.Checks, len(tt.health.Checks))
		})
	}
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, nil)
	m := f.s.Metrics()
	for _, ev := range []table.Event{
		{Round: "#1", Body: round.Event{Note: round.Note{Type: round.EvCardDealt, Seat: 1, Card: card.MustParse("As")}}},
		{Round: "#1", Body: round.Event{Note: round.Note{Type: round.EvCardDealt, Seat: 0, Hole: true}}},
		{Body: table.Burned{Card: card.MustParse("2c")}},
		{Body: table.Alarm{Code: "shoe.misread", Message: "misread", Pauses: true}},
		{Body: table.Alarm{Code: "unexpected_card", Message: "x"}},
		{Round: "#1", Body: round.NewEvent(round.Note{Type: round.EvSettled}, "", &round.Settlement{})},
		{Round: "#2", Body: round.NewEvent(round.Note{Type: round.EvSettled}, "", &round.Settlement{Void: true})},
	} {
		f.s.observe(ev)
	}
	m.ObservePublishLatency(3 * time.Millisecond)
	m.ObserveFsync(time.Millisecond)
	m.SetOutboxDepth(12)
	text := scrape(t, f.web.URL)
	for _, want := range []string{
		"livetable_cards_read_total 3",
		"livetable_misreads_total 1",
		`livetable_alarms_total{code="shoe.misread"} 1`,
		`livetable_alarms_total{code="unexpected_card"} 1`,
		`livetable_rounds_total{result="settled"} 1`,
		`livetable_rounds_total{result="void"} 1`,
		"livetable_publish_latency_seconds_count 1",
		"livetable_journal_fsync_seconds_count 1",
		"livetable_outbox_depth 12",
		"go_goroutines",
	} {
		assert.Contains(t, text, want)
	}
	m.SetOutboxDepthFunc(func() int { return 40 })
	_, stop := f.fake.Subscribe("publisher", 1)
	defer stop()
	f.fake.Push(table.Event{Body: table.Alarm{Code: "a"}})
	f.fake.Push(table.Event{Body: table.Alarm{Code: "b"}})
	assert.Contains(t, scrape(t, f.web.URL), `livetable_subscriber_dropped_total{subscriber="publisher"} 1`,
		"the table's drop counters, read at scrape time")
	assert.Contains(t, scrape(t, f.web.URL), "livetable_outbox_depth 40")
	assert.NotContains(t, scrape(t, f.web.URL), "livetable_publish_latency_recent_seconds")
	m.SetPublishLatencyFunc(func() LatencySummary {
		return LatencySummary{Count: 7, P50: 2 * time.Millisecond, P99: 9 * time.Millisecond, Max: 12 * time.Millisecond}
	})
	text = scrape(t, f.web.URL)
	assert.Contains(t, text, `livetable_publish_latency_recent_seconds{quantile="0.5"} 0.002`)
	assert.Contains(t, text, `livetable_publish_latency_recent_seconds{quantile="0.99"} 0.009`)
	assert.Contains(t, text, `livetable_publish_latency_recent_seconds{quantile="1"} 0.012`)
	assert.Contains(t, text, "livetable_publish_latency_measured_total 7")
	m.SetPublishLatencyFunc(nil)
	m.SetOutboxDepthFunc(nil)
	assert.Contains(t, scrape(t, f.web.URL), "livetable_outbox_depth 12")
	assert.NotContains(t, scrape(t, f.web.URL), "livetable_broker_takeover_suspected_total", "not reported")
	m.SetBrokerTakeoverFunc(func() (uint64, uint64) { return 7, 2 })
	text = scrape(t, f.web.URL)
	assert.Contains(t, text, "livetable_broker_short_connections_total 7")
	assert.Contains(t, text, "livetable_broker_takeover_suspected_total 2")
	assert.NotContains(t, text, "livetable_command_refusals_total", "not reported")
	m.SetCommandRefusalsFunc(func() map[string]uint64 { return map[string]uint64{"wrong_topic": 3, "too_large": 1} })
	text = scrape(t, f.web.URL)
	assert.Contains(t, text, "# TYPE livetable_command_refusals_total counter")
	assert.Contains(t, text, "livetable_command_refusals_total{code=\"too_large\"} 1\nlivetable_command_refusals_total{code=\"wrong_topic\"} 3\n", "by code, in order")
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	r, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.StatusCode)
	return body(t, r)
}

// runServer runs the fixture's server on a free port and returns its URL.
func (f *fixture) run(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.s.Run(ctx) }()
	select {
	case <-f.s.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("console did not start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	require.Eventually(t, func() bool { return f.fake.Subscribers() == 1 }, 5*time.Second, 5*time.Millisecond)
	return "http://" + f.s.Addr()
}

// sseReader reads server-sent events one at a time.
type sseReader struct {
	sc *bufio.Scanner
}

func (r *sseReader) next(t *testing.T) (name string, ev map[string]any) {
	t.Helper()
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev))
		case line == "" && name != "":
			return name, ev
		}
	}
	t.Fatalf("stream ended: %v", r.sc.Err())
	return "", nil
}

func TestEventsStream(t *testing.T) {
	f := newFixture(t, nil)
	base := f.run(t)
	assert.NotEqual(t, "0", base[strings.LastIndexByte(base, ':')+1:], "Addr tells the real port")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	rd := &sseReader{sc: bufio.NewScanner(resp.Body)}

	name, ev := rd.next(t)
	assert.Equal(t, "state", name)
	assert.Equal(t, "state", ev["kind"])
	data := ev["data"].(map[string]any)
	assert.Equal(t, "card to seat 2", data["round"].(map[string]any)["next"])

	st := dealingState()
	st.Round.Next = "hole card to dealer"
	f.fake.SetState(st, epoch.Add(time.Second))
	name, ev = rd.next(t)
	assert.Equal(t, "state", name)
	assert.Equal(t, "hole card to dealer", ev["data"].(map[string]any)["round"].(map[string]any)["next"])

	f.fake.Push(table.Event{Time: epoch, Table: "table1", Body: table.Alarm{Code: "shoe.misread", Message: "card misread", Pauses: true}})
	name, ev = rd.next(t)
	assert.Equal(t, "event", name)
	assert.Equal(t, "alarm", ev["kind"])
	assert.Equal(t, "shoe.misread", ev["data"].(map[string]any)["code"])
}

func TestRunTwice(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Addr = "127.0.0.1:0" })
	f.run(t)
	assert.ErrorIs(t, f.s.Run(context.Background()), ErrRunTwice)
}

func TestRunListenError(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Addr, o.Insecure = "256.0.0.1:0", true })
	err := f.s.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "console: listen")
}

func TestSlowBrowserDropped(t *testing.T) {
	h := newHub(2)
	msg := func(b byte) func() ([]byte, error) {
		return func() ([]byte, error) { return []byte{b}, nil }
	}
	slow, ok := h.join()
	require.True(t, ok)
	fast, ok := h.join()
	require.True(t, ok)
	for i := range 2 {
		n, err := h.broadcast(msg(byte(i)))
		require.NoError(t, err)
		assert.Zero(t, n)
		<-fast.ch
	}
	n, err := h.broadcast(msg(9))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the browser that read nothing is dropped")
	select {
	case <-slow.gone:
	default:
		t.Fatal("slow browser not told it was dropped")
	}
	assert.Equal(t, 1, h.count())
	assert.Equal(t, []byte{9}, <-fast.ch)
	h.closeAll()
	<-fast.gone
}

// TestBroadcastEncodesOnlyForBrowsers: with nobody watching, an event is
// not encoded at all (the pump runs beside the MQTT link on every card);
// an encoding error reaches the caller and nothing is handed out.
func TestBroadcastEncodesOnlyForBrowsers(t *testing.T) {
	h := newHub(2)
	calls := 0
	enc := func() ([]byte, error) { calls++; return []byte("x"), nil }
	n, err := h.broadcast(enc)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Zero(t, calls, "no browser, no encoding")

	c, ok := h.join()
	require.True(t, ok)
	_, err = h.broadcast(enc)
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
	assert.Equal(t, []byte("x"), <-c.ch)

	_, err = h.broadcast(func() ([]byte, error) { return nil, errors.New("boom") })
	require.EqualError(t, err, "boom")
	select {
	case m := <-c.ch:
		t.Fatalf("handed out %q after a failed encoding", m)
	default:
	}
}

func TestErrorKind(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&round.RuleError{Err: round.ErrIllegalAction}, "illegal_action"},
		{fmt.Errorf("table: %w", round.ErrOutOfTurn), "out_of_turn"},
		{round.ErrUnexpectedCard, "unexpected_card"},
		{round.ErrFinished, "finished"},
		{table.ErrPaused, "paused"},
		{context.DeadlineExceeded, "timeout"},
		{errors.New("disk full"), "error"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, errorKind(tt.err), tt.err.Error())
	}
}

// lockedAccounts is testAccounts a test may change while the server
// reads it (as the accounts file is reloaded under a running console).
type lockedAccounts struct {
	mu sync.Mutex
	m  testAccounts
}

func (a *lockedAccounts) PasswordHash(name string) (string, bool, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m.PasswordHash(name)
}

func (a *lockedAccounts) set(name, hash string, canCommand bool, present bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !present {
		delete(a.m, name)
		return
	}
	a.m[name] = struct {
		hash       string
		canCommand bool
	}{hash, canCommand}
}

// TestRevokedSupervisorSessionEnds: the accounts file changes under a
// console session (tablectl supervisor remove, a role or password
// changed, then the reload): the session follows at its next request. It
// kept what the account was at login, and a removed supervisor went on
// commanding from a console left open until the session expired.
func TestRevokedSupervisorSessionEnds(t *testing.T) {
	hash := testHash(t, testPassword)
	for _, tc := range []struct {
		name     string
		change   func(a *lockedAccounts)
		wantCode int
		wantKind string
	}{
		{"removed", func(a *lockedAccounts) { a.set("ann", "", false, false) }, http.StatusUnauthorized, ""},
		{"password changed", func(a *lockedAccounts) { a.set("ann", testHash(t, "another-password"), true, true) }, http.StatusUnauthorized, ""},
		{"made a viewer", func(a *lockedAccounts) { a.set("ann", hash, false, true) }, http.StatusForbidden, "viewer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accts := &lockedAccounts{m: testAccounts{}}
			accts.set("ann", hash, true, true)
			f := newFixture(t, func(o *Options) { o.Accounts = accts })
			c, token := f.supervisorPage(t, "ann")
			tc.change(accts)
			code, e := f.command(t, c, token, "", CommandRequest{Command: "pause", Reason: "still here"})
			assert.Equal(t, tc.wantCode, code)
			if tc.wantKind != "" {
				assert.Equal(t, tc.wantKind, e.Kind)
			}
			assert.Empty(t, f.fake.Inputs(), "nothing reached the table")
		})
	}
}
