package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

//go:embed assets
var assets embed.FS

// pages are the server-rendered pages: only what must carry a token.
type pages struct {
	static     fs.FS
	dealer     *template.Template
	login      *template.Template
	supervisor *template.Template
}

func loadPages() (*pages, error) {
	st, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, fmt.Errorf("console: assets: %w", err)
	}
	dealer, err := template.ParseFS(st, "dealer.html")
	if err != nil {
		return nil, fmt.Errorf("console: dealer page: %w", err)
	}
	login, err := template.ParseFS(st, "login.html")
	if err != nil {
		return nil, fmt.Errorf("console: login page: %w", err)
	}
	sup, err := template.ParseFS(st, "supervisor.html")
	if err != nil {
		return nil, fmt.Errorf("console: supervisor page: %w", err)
	}
	return &pages{static: st, dealer: dealer, login: login, supervisor: sup}, nil
}

// contentPolicy allows nothing but the console's own files: no inline
// script, no other origin (the studio has no internet anyway).
const contentPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	static := http.FileServerFS(s.pages.static)
	mux.HandleFunc("GET /{$}", s.handleDealerPage)
	mux.Handle("GET /static/", http.StripPrefix("/static/", static))
	mux.HandleFunc("GET /events", s.handleEvents)
	mux.HandleFunc("GET /api/state", s.handleState)
	mux.HandleFunc("GET /healthz", s.handleHealthz)
	mux.Handle("GET /metrics", s.metrics.Handler())

	mux.HandleFunc("GET /login", s.handleLoginPage)
	mux.HandleFunc("POST /login", s.handleLogin)
	mux.HandleFunc("POST /logout", s.supervisorOnly(s.handleLogout))
	mux.HandleFunc("GET /supervisor", s.handleSupervisorPage)
	mux.HandleFunc("POST /api/command", s.supervisorOnly(s.handleCommand))
	mux.HandleFunc("GET /api/recall", s.supervisorOnly(s.handleRecent))
	mux.HandleFunc("GET /api/round", s.supervisorOnly(s.handleRound))
	mux.HandleFunc("GET /api/alarms", s.supervisorOnly(s.handleAlarms))
	mux.HandleFunc("GET /api/health", s.supervisorOnly(s.handleHealth))
	return mux
}

func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer Chromium sends
	// "Origin: null" on form posts, which sameOrigin must refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

func (s *Server) handleDealerPage(w http.ResponseWriter, r *http.Request) {
	pd := s.pageData(w, r)
	secureHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.pages.dealer.Execute(w, struct {
		pageData
		GameName string
	}{pd, s.opts.GameName}); err != nil {
		s.log.Error().Err(err).Msg("dealer page")
	}
}

func (s *Server) handleState(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.table.Snapshot())
}

// supervisorOnly admits a logged-in supervisor; a POST must also carry the
// session's CSRF token and come from the console's own origin.
func (s *Server) supervisorOnly(next func(http.ResponseWriter, *http.Request, *session, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, token := s.auth.session(r)
		if sess == nil {
			writeJSON(w, http.StatusUnauthorized, apiError{Error: "console: log in as supervisor", Kind: "unauthorized"})
			return
		}
		if r.Method == http.MethodPost {
			got := r.Header.Get(csrfHeader)
			if got == "" {
				got = r.PostFormValue(csrfField)
			}
			if !sameOrigin(r) || !tokensEqual(got, sess.csrf) {
				s.log.Warn().Str("user", sess.user).Str("path", r.URL.Path).Msg("request without a valid CSRF token refused")
				writeJSON(w, http.StatusForbidden, apiError{Error: "console: missing or wrong CSRF token", Kind: "csrf"})
				return
			}
		}
		next(w, r, sess, token)
	}
}

type loginData struct {
	pageData
	CSRF  string
	Error string
	User  string
}

// renderLogin shows the login page; errKey (and its args) name the
// catalogue's error text, "" for none.
func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, code int, user, errKey string, args ...any) {
	d := loginData{pageData: s.pageData(w, r), User: user}
	if errKey != "" {
		d.Error = s.i18n.t(d.Lang, errKey, args...)
	}
	d.CSRF = randomToken()
	http.SetCookie(w, s.auth.cookie(loginCookie, d.CSRF, "/login", 600))
	secureHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := s.pages.login.Execute(w, d); err != nil {
		s.log.Error().Err(err).Msg("login page")
	}
}

func (s *Server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	if sess, _ := s.auth.session(r); sess != nil {
		http.Redirect(w, r, "/supervisor", http.StatusSeeOther)
		return
	}
	s.renderLogin(w, r, http.StatusOK, "", "")
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096) // a name, a password, a token
	addr := clientAddr(r)
	user := strings.TrimSpace(r.PostFormValue("user"))
	c, err := r.Cookie(loginCookie)
	if err != nil || !sameOrigin(r) || !tokensEqual(r.PostFormValue(csrfField), c.Value) {
		s.log.Warn().Str("addr", addr).Bool("cookie", err == nil).Bool("same_origin", sameOrigin(r)).
			Msg("login form without a valid CSRF token refused")
		s.renderLogin(w, r, http.StatusForbidden, user, "login.expired")
		return
	}
	if wait := s.auth.wait(user, addr); wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		s.log.Warn().Str("addr", addr).Str("user", user).Int("wait_s", secs).Msg("login refused: too many failures, waiting")
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.renderLogin(w, r, http.StatusTooManyRequests, user, "login.wait", secs)
		return
	}
	sess, token, ok := s.auth.login(user, r.PostFormValue("password"))
	if !ok {
		s.auth.fail(user, addr)
		s.log.Warn().Str("addr", addr).Str("user", user).Msg("login refused: wrong name or password")
		s.renderLogin(w, r, http.StatusUnauthorized, user, "login.wrong")
		return
	}
	s.auth.succeeded(user, addr)
	s.log.Info().Str("user", sess.user).Str("addr", addr).Msg("supervisor logged in")
	http.SetCookie(w, s.auth.cookie(loginCookie, "", "/login", -1))
	http.SetCookie(w, s.auth.cookie(sessionCookie, token, "/", int(s.opts.SessionTTL.Seconds())))
	http.Redirect(w, r, "/supervisor", http.StatusSeeOther)
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request, sess *session, token string) {
	s.auth.logout(token)
	s.log.Info().Str("user", sess.user).Msg("supervisor logged out")
	http.SetCookie(w, s.auth.cookie(sessionCookie, "", "/", -1))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (s *Server) handleSupervisorPage(w http.ResponseWriter, r *http.Request) {
	sess, _ := s.auth.session(r)
	if sess == nil {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	secureHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	d := struct {
		pageData
		CSRF, User, GameName string
	}{s.pageData(w, r), sess.csrf, sess.user, s.opts.GameName}
	if err := s.pages.supervisor.Execute(w, d); err != nil {
		s.log.Error().Err(err).Msg("supervisor page")
	}
}

// CommandRequest is the body of POST /api/command.
type CommandRequest struct {
	// Command is pause, resume, void, correct or shuffler_reset (the
	// dual-shoe shuffler out of its fault: a device's, not the table's;
	// the table journals who did it).
	Command string `json:"command"`
	// Reason is required for pause and void.
	Reason string `json:"reason,omitempty"`
	// Card is the corrected card for correct, as "Qh".
	Card string `json:"card,omitempty"`
	// At, for correct, names the card it corrects: its position in the
	// shoe as the page shows it (the state's misread_at). The table
	// refuses the correct when that card is no longer the next to correct
	// (kind misread_at); 0 names none.
	At int `json:"at,omitempty"`
	// Round, for void and correct, is the round the page showed the
	// supervisor when they pressed the button (the state's round id), not
	// the round in play when the request arrives: the table refuses the
	// command (kind wrong_round), nothing changed, when that round is no
	// longer the one in play, or (a void) has settled. Required for void:
	// a void without it would void whatever round is in play by then. For
	// correct it is sent whenever the page shows a round.
	Round string `json:"round,omitempty"`
}

// apiError is the JSON of every refused API call. Kind lets the page (and
// a script) branch without parsing the message.
type apiError struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// command turns a request into the table's input, or says what is wrong.
func command(req CommandRequest, by string) (table.Supervisor, error) {
	in := table.Supervisor{Command: req.Command, By: by, Reason: strings.TrimSpace(req.Reason), Round: strings.TrimSpace(req.Round)}
	if req.At != 0 && req.Command != "correct" {
		return in, fmt.Errorf("%w: at names the card a correct is for; %s takes none", ErrBadCommand, req.Command)
	}
	if in.Round != "" && req.Command != "void" && req.Command != "correct" {
		return in, fmt.Errorf("%w: round names the round a void or a correct is for; %s takes none", ErrBadCommand, req.Command)
	}
	switch req.Command {
	case "pause", "void":
		if in.Reason == "" {
			return in, fmt.Errorf("%w: %s needs a reason", ErrBadCommand, req.Command)
		}
		if req.Command == "void" && in.Round == "" {
			// A page older than the round fence (open across an
			// upgrade) sends none: its void would act on whatever round
			// is in play when it arrives.
			return in, fmt.Errorf("%w: void needs the round it is for, the one the page shows (round): reload the page", ErrBadCommand)
		}
	case "resume":
	case "correct":
		if strings.TrimSpace(req.Card) == "" {
			return in, fmt.Errorf("%w: correct needs the card, as read from the card itself (Qh, Ts)", ErrBadCommand)
		}
		c, err := card.Parse(strings.TrimSpace(req.Card))
		if err != nil {
			return in, fmt.Errorf("%w: card %q: %w", ErrBadCommand, req.Card, err)
		}
		if req.At < 0 {
			return in, fmt.Errorf("%w: at %d: a card's position in the shoe counts from 1", ErrBadCommand, req.At)
		}
		in.Card, in.At = c, req.At
	default:
		return in, fmt.Errorf("%w: unknown command %q", ErrBadCommand, req.Command)
	}
	return in, nil
}

// errorKind names the table's verdict for the page.
func errorKind(err error) string {
	var re *round.RuleError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, table.ErrPaused):
		return "paused"
	case errors.Is(err, table.ErrMisreadAt):
		return "misread_at"
	case errors.Is(err, table.ErrWrongRound):
		return "wrong_round"
	case errors.Is(err, table.ErrMisreadPending):
		return "misread_pending"
	case errors.Is(err, table.ErrShoeDown):
		return "shoe_down"
	case errors.Is(err, round.ErrUnexpectedCard):
		return "unexpected_card"
	case errors.Is(err, round.ErrOutOfTurn):
		return "out_of_turn"
	case errors.Is(err, round.ErrFinished):
		return "finished"
	case errors.Is(err, round.ErrIllegalAction), errors.As(err, &re):
		return "illegal_action"
	}
	return "error"
}

func (s *Server) handleCommand(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	var req CommandRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("console: bad request: %v", err), Kind: "bad_request"})
		return
	}
	if !sess.canCommand {
		writeJSON(w, http.StatusForbidden, apiError{Error: ErrViewer.Error(), Kind: "viewer"})
		return
	}
	if req.Command == cmdShufflerReset {
		s.resetShuffler(w, r, req, sess)
		return
	}
	in, err := command(req, sess.user)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: err.Error(), Kind: "bad_request"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.SubmitTimeout)
	defer cancel()
	lc := s.log.With().Str("user", sess.user).Str("command", in.Command).Str("reason", in.Reason)
	if in.Round != "" {
		lc = lc.Str("round", in.Round)
	}
	if in.Command == "correct" {
		lc = lc.Stringer("card", in.Card).Int("at", in.At)
	}
	log := lc.Logger()
	if err := s.table.Submit(ctx, in); err != nil {
		log.Warn().Err(err).Msg("supervisor command refused")
		code := http.StatusConflict
		if errorKind(err) == "timeout" {
			code = http.StatusGatewayTimeout
		}
		writeJSON(w, code, apiError{Error: err.Error(), Kind: errorKind(err)})
		return
	}
	log.Debug().Msg("supervisor command accepted") // the table's event says it (PAUSED by ...)
	writeJSON(w, http.StatusOK, map[string]string{"ok": in.Command})
}

func (s *Server) handleRecent(w http.ResponseWriter, r *http.Request, _ *session, _ string) {
	n := s.opts.RecallRounds
	if v := r.URL.Query().Get("n"); v != "" {
		if k, err := strconv.Atoi(v); err == nil && k > 0 && k <= 1000 {
			n = k
		}
	}
	list, err := s.recall.Recent(n)
	if err != nil {
		s.log.Error().Err(err).Msg("recall failed")
		writeJSON(w, http.StatusInternalServerError, apiError{Error: err.Error(), Kind: "recall"})
		return
	}
	if list == nil {
		list = []RoundSummary{}
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) handleRound(w http.ResponseWriter, r *http.Request, _ *session, _ string) {
	d, err := s.recall.Round(r.URL.Query().Get("code"))
	switch {
	case errors.Is(err, ErrNoRound):
		writeJSON(w, http.StatusNotFound, apiError{Error: err.Error(), Kind: "no_round"})
	case err != nil:
		s.log.Error().Err(err).Msg("recall failed")
		writeJSON(w, http.StatusInternalServerError, apiError{Error: err.Error(), Kind: "recall"})
	default:
		writeJSON(w, http.StatusOK, d)
	}
}

func (s *Server) handleAlarms(w http.ResponseWriter, _ *http.Request, _ *session, _ string) {
	writeJSON(w, http.StatusOK, s.alarms.recent())
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request, _ *session, _ string) {
	writeJSON(w, http.StatusOK, s.health())
}

// cmdShufflerReset is the supervisor's reset of the shuffler's fault.
const cmdShufflerReset = "shuffler_reset"

// resetShuffler answers the shuffler_reset command through
// Options.ShufflerReset: the same session, CSRF and role checks as every
// command (handleCommand's), its verdict as a kind the page branches on,
// and a log line naming the supervisor either way.
func (s *Server) resetShuffler(w http.ResponseWriter, r *http.Request, req CommandRequest, sess *session) {
	if req.Card != "" || req.At != 0 || req.Round != "" {
		writeJSON(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("%v: shuffler_reset takes no card and no round", ErrBadCommand), Kind: "bad_request"})
		return
	}
	reason := strings.TrimSpace(req.Reason)
	log := s.log.With().Str("user", sess.user).Str("command", req.Command).Str("reason", reason).Logger()
	if s.opts.ShufflerReset == nil {
		log.Warn().Msg("shuffler reset refused: this table runs no shuffler")
		writeJSON(w, http.StatusConflict, apiError{Error: ErrNoShuffler.Error(), Kind: "no_shuffler"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.SubmitTimeout)
	defer cancel()
	if err := s.opts.ShufflerReset(ctx, sess.user, reason); err != nil {
		log.Warn().Err(err).Msg("shuffler reset refused")
		code, kind := http.StatusConflict, "error"
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			code, kind = http.StatusGatewayTimeout, "timeout"
		case errors.Is(err, ErrShufflerNotInFault):
			kind = "shuffler_not_in_fault"
		case errors.Is(err, ErrNoShuffler):
			kind = "no_shuffler"
		}
		writeJSON(w, code, apiError{Error: err.Error(), Kind: kind})
		return
	}
	// The table journals and publishes the reset (alarm shuffler.reset,
	// naming the supervisor); this line is the console's own record.
	log.Info().Msg("shuffler reset: it reads its sensors again and takes swap requests")
	writeJSON(w, http.StatusOK, map[string]string{"ok": req.Command})
}
