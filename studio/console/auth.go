package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"golang.org/x/crypto/bcrypt"
)

// The cookies. The session cookie carries a random token, never the name;
// the login cookie is the double-submitted CSRF token of the login form.
const (
	sessionCookie = "livetable_session"
	loginCookie   = "livetable_login"
	csrfHeader    = "X-CSRF-Token"
	csrfField     = "csrf"
)

// HashPassword returns the bcrypt hash of a supervisor's password, for
// Options.Supervisors (and for tablectl or a config tool that sets one).
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("console: hash password: %w", err)
	}
	return string(h), nil
}

func checkHash(hash string) error {
	if _, err := bcrypt.Cost([]byte(hash)); err != nil {
		return fmt.Errorf("%w: %w", ErrBadHash, err)
	}
	return nil
}

// dummyHash is compared against when the name is unknown, so a wrong name
// costs as long as a wrong password and names cannot be probed by timing.
// It is made on first use (a bcrypt hash costs tens of milliseconds).
var dummyHash = sync.OnceValue(func() []byte {
	h, err := bcrypt.GenerateFromPassword([]byte(randomToken()), bcrypt.DefaultCost)
	if err != nil {
		// Only a password over 72 bytes fails, and a token is 43.
		return nil
	}
	return h
})

// session is one logged-in supervisor.
type session struct {
	user    string
	csrf    string
	expires time.Time
}

// failures counts one address's failed logins in the current window.
type failures struct {
	n     int
	since time.Time
}

// auth holds the sessions and the login limiter.
type auth struct {
	users    map[string]string
	ttl      time.Duration
	attempts int
	window   time.Duration
	secure   bool
	clk      clockwork.Clock

	mu       sync.Mutex // guards the following
	sessions map[string]*session
	failed   map[string]*failures
}

func newAuth(o Options) *auth {
	return &auth{users: o.Supervisors, ttl: o.SessionTTL, attempts: o.LoginAttempts, window: o.LoginWindow,
		secure: o.SecureCookie, clk: o.Clock,
		sessions: make(map[string]*session), failed: make(map[string]*failures)}
}

func randomToken() string {
	var b [32]byte
	// crypto/rand.Read never fails on the supported platforms (Go 1.24+).
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// locked reports whether addr has used up its failed logins.
func (a *auth) locked(addr string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	f := a.failed[addr]
	if f == nil {
		return false
	}
	if a.clk.Since(f.since) >= a.window {
		delete(a.failed, addr)
		return false
	}
	return f.n >= a.attempts
}

// maxTracked bounds the addresses the limiter remembers; past it, the
// ones whose window has passed are forgotten first.
const maxTracked = 4096

func (a *auth) fail(addr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.failed) >= maxTracked {
		for k, f := range a.failed {
			if a.clk.Since(f.since) >= a.window {
				delete(a.failed, k)
			}
		}
	}
	f := a.failed[addr]
	if f == nil || a.clk.Since(f.since) >= a.window {
		f = &failures{since: a.clk.Now()}
		a.failed[addr] = f
	}
	f.n++
}

// login checks a name and password and opens a session.
func (a *auth) login(user, password string) (*session, string, bool) {
	hash, known := a.users[user]
	h := dummyHash()
	if known {
		h = []byte(hash)
	}
	if bcrypt.CompareHashAndPassword(h, []byte(password)) != nil || !known {
		return nil, "", false
	}
	token := randomToken()
	s := &session{user: user, csrf: randomToken(), expires: a.clk.Now().Add(a.ttl)}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pruneLocked()
	a.sessions[token] = s
	return s, token, true
}

// pruneLocked forgets expired sessions; a.mu must be held.
func (a *auth) pruneLocked() {
	now := a.clk.Now()
	for t, s := range a.sessions {
		if !now.Before(s.expires) {
			delete(a.sessions, t)
		}
	}
}

// session returns the request's live session, if any.
func (a *auth) session(r *http.Request) (*session, string) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[c.Value]
	if s == nil {
		return nil, ""
	}
	if !a.clk.Now().Before(s.expires) {
		delete(a.sessions, c.Value)
		return nil, ""
	}
	return s, c.Value
}

func (a *auth) logout(token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, token)
}

func (a *auth) cookie(name, value, path string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: path, MaxAge: maxAge,
		HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteStrictMode}
}

func tokensEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// clientAddr is the address failed logins are counted against: the peer's
// IP (the console is not meant to sit behind a proxy that hides it).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// sameOrigin refuses a cross-site POST that a browser labelled as such: a
// second line of defence behind the CSRF tokens and SameSite cookies.
func sameOrigin(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return o == ""
	}
	return o == "http://"+r.Host || o == "https://"+r.Host
}
