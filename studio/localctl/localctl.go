// Package localctl is the table's local control: a unix socket in the
// table's data directory through which tablectl, run on the table box
// itself, pauses, resumes, voids, corrects and reads the state. The
// socket's file permissions are the authorisation (owner and group of
// tabled, mode 0660 in a 0750 data directory): whoever can open it is
// trusted like someone at the machine, and is recorded by their operating
// system account, read from the connection's peer credentials.
//
// The protocol is one JSON request line and one JSON reply line per
// connection.
package localctl

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// SocketName is the socket's name in the data directory.
const SocketName = "tabled.sock"

// maxRequest bounds a request line.
const maxRequest = 4096

// Table is what the socket needs from the controller.
type Table interface {
	Snapshot() table.State
	Submit(ctx context.Context, in table.Input) error
}

// Request is one command: pause, resume, void, correct, status, reload or
// shuffler-reset.
type Request struct {
	Command string `json:"command"`
	Reason  string `json:"reason,omitempty"`
	// Card is the right card of a correct, as "Qh".
	Card string `json:"card,omitempty"`
	// At, for a correct, names the card it corrects: its position in the
	// shoe, the state's misread_at (table.Supervisor.At). 0 names none
	// (the next waiting is filled, whichever it is).
	At int `json:"at,omitempty"`
	// Round, for a void or a correct, names the round it is meant for:
	// the state's round when the supervisor looked (table.Supervisor.Round).
	// The table refuses one naming another round than its own, or a void
	// naming a round that has settled (code wrong_round), nothing changed,
	// as it judges the signed command over MQTT. Empty names none: the
	// command acts on whatever round is in play (tablectl always sends it
	// for a void). A pause or a resume takes none.
	Round string `json:"round,omitempty"`
	// ID is the command id; empty gets a fresh one. The table applies an
	// id once.
	ID string `json:"id,omitempty"`
}

// Reply is the table's answer.
type Reply struct {
	Accepted bool   `json:"accepted"`
	Error    string `json:"error,omitempty"`
	// Code names why the table refused the command, as the MQTT reply's
	// code does (table.RefusalCode: misread_at, no_misread, paused...;
	// timeout when the table did not answer in time, which is not a
	// verdict), for tablectl to branch on; absent when accepted and on a
	// refusal without a code.
	Code string `json:"code,omitempty"`
	// ID is the command id the table saw.
	ID string `json:"id,omitempty"`
	// By is who the command was recorded as.
	By string `json:"by,omitempty"`
	// State is the table's state, for status, and after a correct
	// (accepted or refused: what still waits for a correction).
	State *table.State `json:"state,omitempty"`
	// Health is the daemon's health checks, for status (the console's
	// /healthz): what the state does not say, such as a broker that is
	// away while the table deals on.
	Health []Check `json:"health,omitempty"`
}

// Check is one of the daemon's health checks (shoe, gpio, broker,
// journal, clock).
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Detail says what is wrong, or what is right.
	Detail string `json:"detail,omitempty"`
}

// ErrRefused is a request refused before it reached the table.
var ErrRefused = errors.New("localctl: request refused")

// Server serves the socket.
type Server struct {
	// Reload, when set, answers the "reload" request: tabled reads its
	// accounts file again (what SIGHUP does), so that `tablectl
	// supervisor add` takes effect at once. Set it before Run.
	Reload func() error
	// Health, when set, gives the health checks a status reply carries.
	// It must be quick and must not block. Set it before Run.
	Health func() []Check
	// ShufflerReset, when set, answers the "shuffler-reset" request: the
	// dual-shoe shuffler leaves its Fault (latched until a supervisor has
	// looked at the table) and reads its presence sensors again, for the
	// account by (the request's reason says what was fixed). Set it
	// before Run.
	ShufflerReset func(ctx context.Context, by, reason string) error

	ln   *net.UnixListener
	path string
	t    Table
	log  zerolog.Logger
	// cmdLog logs supervisor commands, sampled.
	cmdLog zerolog.Logger
	wait   time.Duration
}

// Listen opens the socket at path, replacing a stale one left by a
// process that died (one nobody answers on), and refusing to take over a
// live one: two daemons on one data directory would be a bigger problem.
func Listen(path string, t Table, log zerolog.Logger) (*Server, error) {
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		_ = c.Close()
		return nil, fmt.Errorf("localctl: %s is in use by another process", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("localctl: remove stale socket: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("localctl: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o660); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("localctl: %w", err)
	}
	// Commands are logged sampled (20 a second, then one in a hundred),
	// as the MQTT link's refusals: a script looping on the socket must
	// not push tabled past journald's rate limit, which drops every line.
	cmdLog := log.Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Second, NextSampler: &zerolog.BasicSampler{N: 100}})
	return &Server{ln: ln, path: path, t: t, log: log, cmdLog: cmdLog, wait: 5 * time.Second}, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Run serves until ctx is done, then closes the socket (removing it).
func (s *Server) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		<-ctx.Done()
		_ = s.ln.Close()
	}()
	var backoff time.Duration
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !transientAccept(err) {
				return fmt.Errorf("localctl: accept: %w", err)
			}
			// Out of file descriptors (or a connection aborted before it
			// was taken): the daemon, and the table, must not stop for
			// it. Wait and take connections again, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn().Err(err).Dur("retry_in", backoff).Msg("local socket: accept failed; retrying")
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serve(ctx, c)
		}()
	}
}

func (s *Server) serve(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(s.wait + 5*time.Second))
	by := peer(c)
	var req Request
	line, err := bufio.NewReaderSize(c, maxRequest).ReadSlice('\n')
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	rep := Reply{By: by}
	if err != nil {
		rep.Error = "bad request: " + err.Error()
	} else {
		rep = s.handle(ctx, req, by)
	}
	b, _ := json.Marshal(rep)
	_, _ = c.Write(append(b, '\n'))
}

func (s *Server) handle(ctx context.Context, req Request, by string) Reply {
	rep := Reply{By: by}
	switch req.Command {
	case "status":
		st := s.t.Snapshot()
		rep.Accepted, rep.State = true, &st
		if s.Health != nil {
			rep.Health = s.Health()
		}
		return rep
	case "reload":
		if s.Reload == nil {
			rep.Error = "this table has nothing to reload"
			return rep
		}
		if err := s.Reload(); err != nil {
			rep.Error = err.Error()
			return rep
		}
		s.log.Info().Str("by", by).Msg("accounts reloaded")
		rep.Accepted = true
		return rep
	case "shuffler-reset":
		if s.ShufflerReset == nil {
			rep.Error = "this table has no shuffler"
			return rep
		}
		sctx, cancel := context.WithTimeout(ctx, s.wait)
		defer cancel()
		if err := s.ShufflerReset(sctx, by, strings.TrimSpace(req.Reason)); err != nil {
			s.log.Warn().Err(err).Str("by", by).Msg("shuffler reset failed")
			rep.Error = err.Error()
			return rep
		}
		s.log.Info().Str("by", by).Msg("shuffler reset: it reads its sensors again and takes swap requests")
		rep.Accepted = true
		return rep
	}
	in, err := Input(req, by)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.ID = in.ID
	sctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	lc := s.cmdLog.With().Str("by", by).Str("command", in.Command).Str("id", in.ID).Str("reason", in.Reason)
	if in.Round != "" {
		lc = lc.Str("round", in.Round)
	}
	if in.Command == "correct" {
		lc = lc.Stringer("card", in.Card).Int("at", in.At)
	}
	log := lc.Logger()
	err = s.t.Submit(sctx, in)
	if in.Command == "correct" {
		st := s.t.Snapshot()
		rep.State = &st
	}
	if err != nil {
		log.Warn().Err(err).Msg("local supervisor command refused")
		rep.Error, rep.Code = err.Error(), table.RefusalCode(err)
		if errors.Is(err, context.DeadlineExceeded) {
			rep.Code = "timeout"
		}
		return rep
	}
	log.Debug().Msg("local supervisor command accepted") // the table's event says it (PAUSED by ...)
	rep.Accepted = true
	return rep
}

// Input turns a request into the table's input, recorded as by.
func Input(req Request, by string) (table.Supervisor, error) {
	in := table.Supervisor{Command: req.Command, By: by, Reason: strings.TrimSpace(req.Reason), ID: req.ID}
	if in.ID == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		in.ID = "local-" + strconv.FormatInt(time.Now().UnixMilli(), 10) + "-" + hex.EncodeToString(b[:])
	}
	if req.At != 0 && req.Command != "correct" {
		return in, fmt.Errorf("%w: at names the card a correct is for; %s takes none", ErrRefused, req.Command)
	}
	in.Round = strings.TrimSpace(req.Round)
	if in.Round != "" && req.Command != "void" && req.Command != "correct" {
		// As the MQTT link refuses it (malformed): a round named on a
		// command that is not judged by it would read as a fence it is not.
		return in, fmt.Errorf("%w: round names the round a void or a correct is for; %s takes none", ErrRefused, req.Command)
	}
	if strings.ContainsAny(in.Round, "\n\r") {
		return in, fmt.Errorf("%w: round %q: a round code is one line", ErrRefused, req.Round)
	}
	switch req.Command {
	case "pause", "void":
		if in.Reason == "" {
			return in, fmt.Errorf("%w: %s needs a reason", ErrRefused, req.Command)
		}
	case "resume":
	case "correct":
		c, err := card.Parse(strings.TrimSpace(req.Card))
		if err != nil {
			return in, fmt.Errorf("%w: card %q: %w", ErrRefused, req.Card, err)
		}
		if req.At < 0 {
			return in, fmt.Errorf("%w: at %d: the card's position in the shoe counts from 1", ErrRefused, req.At)
		}
		in.Card, in.At = c, req.At
	default:
		return in, fmt.Errorf("%w: unknown command %q (pause, resume, void, correct, status, reload, shuffler-reset)", ErrRefused, req.Command)
	}
	return in, nil
}

// peer names the process at the other end by its operating system
// account, "local:NAME" (or "local:uid N" when the account has no name).
func peer(c *net.UnixConn) string {
	raw, err := c.SyscallConn()
	if err != nil {
		return "local:unknown"
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil || cred == nil {
		return "local:unknown"
	}
	uid := strconv.FormatUint(uint64(cred.Uid), 10)
	if u, err := user.LookupId(uid); err == nil {
		return "local:" + u.Username
	}
	return "local:uid " + uid
}

// Do sends one request to the socket at path and returns the reply.
func Do(ctx context.Context, path string, req Request) (Reply, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return Reply{}, fmt.Errorf("localctl: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return Reply{}, fmt.Errorf("localctl: %w", err)
	}
	if _, err := c.Write(append(b, '\n')); err != nil {
		return Reply{}, fmt.Errorf("localctl: %w", err)
	}
	var rep Reply
	if err := json.NewDecoder(c).Decode(&rep); err != nil {
		return Reply{}, fmt.Errorf("localctl: reply: %w", err)
	}
	return rep, nil
}

// transientAccept reports an accept error that passes: the process or
// the system out of file descriptors or memory for a socket, or a
// connection aborted before it was accepted.
func transientAccept(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) ||
		errors.Is(err, syscall.ECONNABORTED)
}
