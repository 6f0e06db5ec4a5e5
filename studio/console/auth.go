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
	user       string
	canCommand bool
	csrf       string
	expires    time.Time
	hash       string // the account's password hash at login
}

// Accounts is where the console finds supervisors: the table's accounts
// file (*supervisors.Store), reloaded on SIGHUP, or Options.Supervisors.
type Accounts interface {
	// PasswordHash returns the account's bcrypt hash, whether it may
	// command the table (a viewer may only look), and whether it exists.
	PasswordHash(name string) (hash string, canCommand, ok bool)
}

// staticAccounts serves Options.Supervisors: every one may command.
type staticAccounts map[string]string

func (m staticAccounts) PasswordHash(name string) (string, bool, bool) {
	h, ok := m[name]
	return h, ok, ok
}

// strikes counts the failed logins of one key (an account from an
// address, an address, an account) and when the last one was.
type strikes struct {
	n    int
	last time.Time
}

// The throttle's keys: the three views of one failed login.
const (
	keyPair    = "p\x00" // account and address
	keyAddr    = "a\x00" // address, whatever the account
	keyAccount = "u\x00" // account, from anywhere
)

// Free failures of each key before delays begin, and the longest delay of
// an account from everywhere: low, so that someone guessing from many
// addresses slows the right password from elsewhere by seconds, never
// locks it out.
const (
	freeAddr    = 10
	freeAccount = 20
	maxAccount  = 30 * time.Second
)

// auth holds the sessions and the login throttle.
type auth struct {
	users    Accounts
	ttl      time.Duration
	attempts int
	maxDelay time.Duration
	secure   bool
	clk      clockwork.Clock

	mu       sync.Mutex // guards the following
	sessions map[string]*session
	failed   map[string]*strikes
}

func newAuth(o Options) *auth {
	users := o.Accounts
	if users == nil {
		users = staticAccounts(o.Supervisors)
	}
	return &auth{users: users, ttl: o.SessionTTL, attempts: o.LoginAttempts, maxDelay: o.LoginWindow,
		secure: o.SecureCookie, clk: o.Clock,
		sessions: make(map[string]*session), failed: make(map[string]*strikes)}
}

func randomToken() string {
	var b [32]byte
	// crypto/rand.Read never fails on the supported platforms (Go 1.24+).
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// delay is the wait after n failures of a key that has free failures
// before delays begin: 1 s, doubling with each further failure, capped.
func delay(n, free int, ceiling time.Duration) time.Duration {
	if n < free {
		return 0
	}
	d := time.Second << min(n-free, 20)
	return min(d, ceiling)
}

// throttleKeys are the keys of a login by user from addr, with their
// free failures and longest delay.
func (a *auth) throttleKeys(user, addr string) [3]struct {
	key     string
	free    int
	ceiling time.Duration
} {
	return [3]struct {
		key     string
		free    int
		ceiling time.Duration
	}{
		{keyPair + user + "\x00" + addr, a.attempts, a.maxDelay},
		{keyAddr + addr, freeAddr, a.maxDelay},
		{keyAccount + user, freeAccount, min(maxAccount, a.maxDelay)},
	}
}

// wait returns how long a login by user from addr must wait still: the
// longest of what its account from that address, the address and the
// account have earned. The right password from another address waits only
// for the account's own (short) delay.
func (a *auth) wait(user, addr string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clk.Now()
	var w time.Duration
	for _, k := range a.throttleKeys(user, addr) {
		s := a.failed[k.key]
		if s == nil {
			continue
		}
		if left := s.last.Add(delay(s.n, k.free, k.ceiling)).Sub(now); left > w {
			w = left
		}
	}
	return w
}

// maxTracked bounds the keys the throttle remembers; past it, those quiet
// for longer than the longest delay are forgotten first.
const maxTracked = 4096

// fail counts a failed login against its three keys.
func (a *auth) fail(user, addr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clk.Now()
	if len(a.failed) >= maxTracked {
		for k, s := range a.failed {
			if now.Sub(s.last) >= a.maxDelay {
				delete(a.failed, k)
			}
		}
	}
	for _, k := range a.throttleKeys(user, addr) {
		s := a.failed[k.key]
		if s == nil {
			if len(a.failed) >= 2*maxTracked {
				continue // a flood of new keys: the ones already counted still hold
			}
			s = &strikes{}
			a.failed[k.key] = s
		} else if now.Sub(s.last) >= 2*a.maxDelay {
			s.n = 0 // quiet long enough: start again
		}
		s.n++
		s.last = now
	}
}

// succeeded forgets the failures of an account from the address it has
// just logged in from.
func (a *auth) succeeded(user, addr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.failed, keyPair+user+"\x00"+addr)
	delete(a.failed, keyAccount+user)
}

// login checks a name and password and opens a session.
func (a *auth) login(user, password string) (*session, string, bool) {
	hash, canCommand, known := a.users.PasswordHash(user)
	h := dummyHash()
	if known {
		h = []byte(hash)
	}
	if bcrypt.CompareHashAndPassword(h, []byte(password)) != nil || !known {
		return nil, "", false
	}
	token := randomToken()
	s := &session{user: user, canCommand: canCommand, csrf: randomToken(), expires: a.clk.Now().Add(a.ttl), hash: hash}
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
	// The accounts as they are now (the file is read again on SIGHUP and
	// after tablectl supervisor add/remove): an account removed, or whose
	// password changed, is logged out at its next request, and one made a
	// viewer may no longer command. A session kept what the account was
	// at login, so a revoked supervisor went on pausing and voiding from
	// a console left open until the session expired.
	h, can, ok := a.users.PasswordHash(s.user)
	if !ok || h != s.hash {
		delete(a.sessions, c.Value)
		return nil, ""
	}
	if can != s.canCommand {
		// A new value, not a write to one a request may be reading.
		ns := *s
		ns.canCommand = can
		a.sessions[c.Value] = &ns
		s = &ns
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
