package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/identity"
)

// remoteFlags address a running table: over its local socket, or over
// MQTT with --broker.
type remoteFlags struct {
	broker, studio, table, user, pass string
	caFile, certFile, keyFile         string
	timeout                           time.Duration
	g                                 *globals
	brokerSet                         bool // --broker given: MQTT even when the socket is there
}

func (rf *remoteFlags) register(fs *flag.FlagSet, g *globals) {
	c := g.cfg.Broker
	rf.g = g
	fs.StringVar(&rf.broker, "broker", g.brokerURL(), "MQTT broker of the table (tcp://, ssl://), or the nodes of a cluster comma-separated (tried in order); given, commands go over MQTT instead of the local socket")
	fs.StringVar(&rf.studio, "studio", g.cfg.Studio, "studio id")
	fs.StringVar(&rf.table, "table", g.cfg.Table, "table id")
	fs.StringVar(&rf.user, "user", c.Username, "MQTT username")
	fs.StringVar(&rf.pass, "password", c.Password, "MQTT password (or $LIVETABLE_MQTT_PASSWORD)")
	fs.StringVar(&rf.caFile, "ca-file", c.CAFile, "PEM CA bundle that signed the broker's certificate (TLS)")
	fs.StringVar(&rf.certFile, "cert-file", c.CertFile, "PEM client certificate for the broker (TLS)")
	fs.StringVar(&rf.keyFile, "key-file", c.KeyFile, "the client certificate's PEM key (TLS)")
	fs.DurationVar(&rf.timeout, "timeout", 5*time.Second, "how long to wait for the table")
}

// parsed notes which flags were given; call after parsing.
func (rf *remoteFlags) parsed(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "broker" {
			rf.brokerSet = true
		}
	})
	if rf.pass == "" {
		rf.pass = os.Getenv("LIVETABLE_MQTT_PASSWORD")
	}
}

// socket is tabled's local control socket in the data directory.
func (rf *remoteFlags) socket() string { return filepath.Join(rf.g.dataDir, localctl.SocketName) }

// local reports whether to use the local socket: not when --broker is
// given; otherwise when the socket is there, or when the config names no
// external broker (then the error says where the socket was looked for).
func (rf *remoteFlags) local() bool {
	if rf.brokerSet {
		return false
	}
	if _, err := os.Stat(rf.socket()); err == nil {
		return true
	}
	return rf.g.cfg.Broker.URL == ""
}

// localDo sends one request to the local socket.
func (rf *remoteFlags) localDo(req localctl.Request) (localctl.Reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rf.timeout+time.Second)
	defer cancel()
	rep, err := localctl.Do(ctx, rf.socket(), req)
	if err != nil {
		return rep, fmt.Errorf("no tabled answers on %s (%w): is tabled (or make run) running with --data-dir %s? For a table elsewhere give --broker", rf.socket(), err, rf.g.dataDir)
	}
	return rep, nil
}

// localTable names the table on the local socket: the one its data
// directory records (identity.json), where the flags' defaults named
// studio1/table1 for any table; --studio and --table given still win.
func (rf *remoteFlags) localTable(fs *flag.FlagSet) string {
	studio, tbl := rf.studio, rf.table
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if id, ok, err := identity.Read(nil, rf.g.dataDir); err == nil && ok {
		if !given["studio"] {
			studio = id.Studio
		}
		if !given["table"] {
			tbl = id.Table
		}
	}
	return studio + "/" + tbl
}

func (rf *remoteFlags) root() string { return "livetable/" + rf.studio + "/" + rf.table + "/" }

// tlsConfig is the TLS towards the broker: for ssl://, tls://, mqtts://
// URLs or when a CA or client certificate is given. The broker is always
// verified.
func (rf *remoteFlags) tlsConfig() (*tls.Config, error) {
	u, err := url.Parse(strings.TrimSpace(strings.Split(rf.broker, ",")[0]))
	if err != nil {
		return nil, fmt.Errorf("broker %q: %w", rf.broker, err)
	}
	secure := u.Scheme == "ssl" || u.Scheme == "tls" || u.Scheme == "mqtts" || u.Scheme == "tcps"
	if !secure && rf.caFile == "" && rf.certFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: u.Hostname()}
	if rf.caFile != "" {
		pem, err := os.ReadFile(rf.caFile)
		if err != nil {
			return nil, fmt.Errorf("ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca-file %s: no PEM certificate", rf.caFile)
		}
		cfg.RootCAs = pool
	}
	if (rf.certFile == "") != (rf.keyFile == "") {
		return nil, errors.New("--cert-file and --key-file go together")
	}
	if rf.certFile != "" {
		cert, err := tls.LoadX509KeyPair(rf.certFile, rf.keyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func (rf *remoteFlags) connect() (paho.Client, error) {
	tc, err := rf.tlsConfig()
	if err != nil {
		return nil, err
	}
	o := paho.NewClientOptions()
	for _, u := range strings.Split(rf.broker, ",") {
		if u = strings.TrimSpace(u); u != "" {
			o.AddBroker(u)
		}
	}
	// Retried until the timeout: a cluster whose node just died refuses
	// connections on the others for the seconds its streams take to
	// elect new leaders. MQTT 3.1.1 only (NATS refuses paho's 3.1 fallback).
	o.SetClientID(fmt.Sprintf("tablectl-%d", time.Now().UnixNano())).SetCleanSession(true).
		SetConnectTimeout(rf.timeout).SetProtocolVersion(4).
		SetConnectRetry(true).SetConnectRetryInterval(250 * time.Millisecond)
	var mu sync.Mutex
	var lastErr error // why the latest attempt failed, for the timeout's message
	o.SetConnectionNotificationHandler(func(_ paho.Client, n paho.ConnectionNotification) {
		if f, ok := n.(paho.ConnectionNotificationFailed); ok {
			mu.Lock()
			lastErr = f.Reason
			mu.Unlock()
		}
	})
	if tc != nil {
		o.SetTLSConfig(tc)
	}
	if rf.user != "" {
		o.SetUsername(rf.user).SetPassword(rf.pass)
	}
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(rf.timeout) {
		c.Disconnect(0) // stops the retries
		mu.Lock()
		defer mu.Unlock()
		if lastErr != nil {
			return nil, fmt.Errorf("connect to %s: timed out; last attempt: %w", rf.broker, lastErr)
		}
		return nil, fmt.Errorf("connect to %s: timed out", rf.broker)
	}
	if err := tok.Error(); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", rf.broker, err)
	}
	return c, nil
}

// runStatus prints the table's state: from the local socket, or the
// retained state over MQTT.
func runStatus(g *globals, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("status", "[flags]", g)
	var rf remoteFlags
	rf.register(fs, g)
	raw := fs.Bool("json", false, "print the state JSON")
	if _, code, ok := parseCmd(fs, args, stdout, stderr); !ok {
		return code
	}
	rf.parsed(fs)
	if rf.local() {
		rep, err := rf.localDo(localctl.Request{Command: "status"})
		if err != nil || rep.State == nil {
			fmt.Fprintln(stderr, "tablectl:", err)
			return 1
		}
		b, err := json.Marshal(map[string]any{"data": rep.State})
		if err != nil {
			fmt.Fprintln(stderr, "tablectl:", err)
			return 1
		}
		if *raw {
			if b, err = json.Marshal(map[string]any{"data": rep.State, "health": rep.Health}); err != nil {
				fmt.Fprintln(stderr, "tablectl:", err)
				return 1
			}
		}
		code := printState(stdout, stderr, b, *raw, fmt.Sprintf("%s (local, %s)", rf.localTable(fs), rf.socket()))
		if !*raw {
			printHealth(stdout, rep.Health)
		}
		return code
	}
	c, err := rf.connect()
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	defer c.Disconnect(100)
	status := make(chan string, 2)
	// QoS 0, as retainedState reads the state.
	c.Subscribe(rf.root()+"status", 0, func(_ paho.Client, m paho.Message) {
		// {"schema":2,"status":"online"}; an older daemon's is the bare word.
		var st struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(m.Payload(), &st) == nil && st.Status != "" {
			status <- st.Status
			return
		}
		status <- string(m.Payload())
	})
	b, err := rf.retainedState(c)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	online := "unknown"
	select {
	case online = <-status:
	case <-time.After(200 * time.Millisecond):
	}
	return printState(stdout, stderr, b, *raw, fmt.Sprintf("%s/%s (%s)", rf.studio, rf.table, online))
}

// errNoState is retainedState's answer when the broker holds no state of
// the table within the timeout.
var errNoState = errors.New("no state from the table (is tabled running, and --studio/--table right?)")

// retainedState reads the table's retained state (its envelope) off the
// broker. QoS 0: a one-off read of a retained message needs no session,
// and a NATS cluster creates a replicated JetStream consumer for every
// QoS 1 subscription (about a second each, docs/deploy.md).
func (rf *remoteFlags) retainedState(cl paho.Client) ([]byte, error) {
	got := make(chan []byte, 1)
	tok := cl.Subscribe(rf.root()+"state", 0, func(_ paho.Client, m paho.Message) {
		select {
		case got <- m.Payload():
		default:
		}
	})
	if !tok.WaitTimeout(rf.timeout) || tok.Error() != nil {
		return nil, errors.New("subscribe to the state failed (does the broker's ACL let this user read it?)")
	}
	defer cl.Unsubscribe(rf.root() + "state")
	select {
	case b := <-got:
		return b, nil
	case <-time.After(rf.timeout):
		return nil, errNoState
	}
}

// printState prints a state envelope ({"data": state}) for people, or as
// it is with raw.
func printState(stdout, stderr io.Writer, b []byte, raw bool, where string) int {
	if raw {
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	var env struct {
		Data struct {
			Seq    uint64 `json:"seq"`
			Game   string `json:"game"`
			Phase  string `json:"phase"`
			Paused bool   `json:"paused"`
			Why    string `json:"pause_reason"`
			Round  struct {
				ID   string `json:"id"`
				Next string `json:"next"`
			} `json:"round"`
			Shoe struct {
				ID    string `json:"id"`
				Dealt int    `json:"dealt"`
				Decks int    `json:"decks"`
				Cut   bool   `json:"cut_card"`
			} `json:"shoe"`
			Alarms []struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"alarms"`
			Rounds int `json:"rounds"`
			// The cards waiting for a correction and those set aside: in
			// the local socket's state (table.State) and, since contract
			// 2.1.0, in the MQTT state too; the waiting cards' positions
			// in the shoe since rules epoch 4 (contract 2.2.0).
			Misread    string   `json:"misread"`
			Misreads   int      `json:"misreads_pending"`
			MisreadAt  int      `json:"misread_at"`
			MisreadsAt []int    `json:"misreads_at"`
			SetAside   []string `json:"set_aside"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		fmt.Fprintln(stderr, "tablectl: state:", err)
		return 1
	}
	d := env.Data
	fmt.Fprintf(stdout, "table %s, game %s, phase %s, last event #%d, %d rounds\n", where, d.Game, d.Phase, d.Seq, d.Rounds)
	if d.Paused {
		fmt.Fprintf(stdout, "PAUSED: %s\n", d.Why)
	}
	if d.Round.ID != "" {
		// The code void and correct name (--round).
		fmt.Fprintf(stdout, "round %s: next: %s\n", d.Round.ID, d.Round.Next)
	} else {
		fmt.Fprintf(stdout, "no round in play: next: %s\n", d.Round.Next)
	}
	switch {
	case d.MisreadAt > 0:
		fmt.Fprintf(stdout, "MISREAD: %d waiting for a correction (cards %s of the shoe), the next to correct: card %d, %s (tablectl correct --card C, in the order the dealer drew them)\n",
			max(d.Misreads, len(d.MisreadsAt), 1), positions(d.MisreadsAt), d.MisreadAt, d.Misread)
	case d.Misread != "":
		fmt.Fprintf(stdout, "MISREAD: %d waiting for a correction, the next to correct: %s (tablectl correct --card, in the order the dealer drew them)\n", max(d.Misreads, 1), d.Misread)
	}
	if n := len(d.SetAside); n > 0 {
		fmt.Fprintf(stdout, "SET ASIDE: %d card(s) the round cannot use, booked as dealt: %s (the dealer puts them aside; one resume, or a void, deals with them all)\n", n, strings.Join(d.SetAside, " "))
	}
	fmt.Fprintf(stdout, "shoe %s: %d dealt, %d left, cut card %v\n", d.Shoe.ID, d.Shoe.Dealt, d.Shoe.Decks*52-d.Shoe.Dealt, d.Shoe.Cut)
	for _, a := range d.Alarms {
		fmt.Fprintf(stdout, "ALARM %s: %s\n", a.Code, a.Message)
	}
	return 0
}

// printHealth prints the daemon's health checks after its state: the
// failing ones each on a line of its own (a broker away while the table
// deals on shows nowhere in the state), else one line that all pass.
func printHealth(w io.Writer, checks []localctl.Check) {
	if len(checks) == 0 {
		return // a tabled older than the checks on its socket
	}
	var names []string
	bad := false
	for _, c := range checks {
		names = append(names, c.Name)
		if !c.OK {
			bad = true
			fmt.Fprintf(w, "UNHEALTHY %s: %s\n", c.Name, c.Detail)
		}
	}
	if !bad {
		fmt.Fprintf(w, "health: ok (%s)\n", strings.Join(names, ", "))
	}
}

// The exit statuses of a supervisor command, past 0 (accepted) and 2
// (usage): what a script branches on, from the reply's code (contract
// 2.3.0). The usage of each command lists them.
const (
	// exitRefused: the table refused the command (its verdict), or
	// tablectl could not send it.
	exitRefused = 1
	// exitNoVerdict: no verdict (timeout, rate_limited, sign_again): the table may
	// still apply the command; send it again with the same --id.
	exitNoVerdict = 3
	// exitMisreadAt: a correct for a card that is not the next to
	// correct (misread_at): corrected already, by someone else or an
	// earlier try, or another card waits first. Nothing changed.
	exitMisreadAt = 4
	// exitNoMisread: a correct while no card waits for one (no_misread).
	exitNoMisread = 5
	// exitWrongRound: a void or a correct naming another round than the
	// table's (wrong_round): the round named settled and another began,
	// or (a void) it is settled. Nothing changed.
	exitWrongRound = 6
)

// roundAbout heads void's and correct's usage: what --round is for.
const roundAbout = `--round names the round the command is for, as tablectl status prints it
("round #22:10:05: next: ..."; quote it, '#22:10:05', or leave out the #).
The table refuses the command if that is not the round in play, or (void)
if it has settled, and changes nothing (exit status 6): a command meant for
a round that ended while you typed never acts on the next one.
void requires it: you void the round you saw, never the one in play when
the command arrives. correct reads it, with the card's position, off the
state when you do not give it, and prints it: you read the card off the
table now.

`

// commandRound is a round as the table names it ("#22:10:05", "#22:10:05-2")
// from --round: the # may be left out, since a shell takes an unquoted
// word starting with # for a comment.
func commandRound(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.HasPrefix(s, "#") {
		s = "#" + s
	}
	return s
}

// shufflerResetAbout heads shuffler-reset's usage.
const shufflerResetAbout = `Takes the dual-shoe shuffler out of its fault. A shuffler alarm (a swap not
acknowledged, a shoe missing from its slot, a wrong card count) pauses the
table and latches the shuffler in Fault, where it refuses every swap, so
that someone looks at the table first. Once the shuffler is fixed, this
resets it: it reads its presence sensors again to find the shoe in play, a
table closed for the swap gets it asked again, and the table journals who
reset it, after which fault (--reason: what was fixed). Refused when the
shuffler is in no fault (nothing to reset). Then resume the table.
Over the local socket (recorded with your Unix account) or, with --broker,
signed over MQTT (--as NAME).

`

// supervisorExits is the exit statuses' part of a supervisor command's
// usage.
func supervisorExits(cmd string) string {
	s := "\nexit status: 0 accepted, 1 refused (the table's verdict) or not sent, 2 usage,\n" +
		"3 no verdict (timeout, rate_limited, sign_again): the table may still apply it; send it again with the same --id"
	if cmd == "correct" {
		s += ",\n4 misread_at: the card named is no longer the next to correct (corrected already, or another\n" +
			"waits first; nothing changed), 5 no_misread: no card waits for a correction"
	}
	if cmd == "void" || cmd == "correct" {
		s += ",\n6 wrong_round: the round named (--round) is not the round in play, or (void) it has settled:\n" +
			"nothing changed; tablectl status shows the round now"
	}
	return s + "\n"
}

// refusal prints a refused command's verdict on w: its code, the table's
// reason and, for the codes a script must tell apart, what they mean;
// it returns the exit status the code calls for.
func refusal(w io.Writer, cmd, id, code, reason string) int {
	label := cmd + " refused"
	if cmd == "shuffler-reset" {
		label = "shuffler not reset"
	}
	if code != "" {
		label += " (" + code + ")"
	}
	fmt.Fprintf(w, "%s: %s\n", label, reason)
	switch {
	case code == "timeout" || code == "rate_limited" || code == "sign_again":
		fmt.Fprintf(w, "not a verdict: the table may still apply it; send the same command again with --id %s to learn the outcome\n", id)
		return exitNoVerdict
	case cmd == "correct" && code == "misread_at":
		fmt.Fprintln(w, "the card named is not the next to correct (corrected already, by someone else or an earlier try, or another card waits first): nothing changed")
		return exitMisreadAt
	case cmd == "correct" && code == "no_misread":
		fmt.Fprintln(w, "no card waits for a correction: nothing changed")
		return exitNoMisread
	case code == "wrong_round":
		fmt.Fprintf(w, "the round named is over (or not the one in play): the table has moved on, and nothing changed; tablectl status shows the round now: send the %s again with its --round only if it is meant for that round\n", cmd)
		return exitWrongRound
	}
	return exitRefused
}

// runSupervisor sends pause, resume, void, correct or shuffler-reset and
// prints the table's answer: through the local socket, or signed over
// MQTT.
func runSupervisor(g *globals, cmd string, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(cmd, "[flags]", g)
	usage := fs.Usage
	fs.Usage = func() {
		if cmd == "shuffler-reset" {
			fmt.Fprint(fs.Output(), shufflerResetAbout)
		}
		if cmd == "void" || cmd == "correct" {
			fmt.Fprint(fs.Output(), roundAbout)
		}
		usage()
		fmt.Fprint(fs.Output(), supervisorExits(cmd))
	}
	var rf remoteFlags
	rf.register(fs, g)
	reason := fs.String("reason", "", "why (recorded in the journal; required for pause and void)")
	cardText := fs.String("card", "", "correct: the card on the table, e.g. Qh, for the oldest card the shoe could not read; with several waiting, correct them one at a time in the order the dealer drew them (tablectl status names the next)")
	at := fs.Int("at", 0, "correct: the position in the shoe of the card it corrects (status's \"next to correct: card N\"); default: the one the table says is next now. The table refuses the correct if that card is no longer the next (corrected already by someone else, say)")
	roundText := fs.String("round", "", "void, correct: the round it is for, as tablectl status prints it ('#22:10:05', or 22:10:05); required for void; correct: default the round of the state it reads the card's position from")
	as := fs.String("as", os.Getenv("USER"), "MQTT: the supervisor account that signs")
	signKey := fs.String("sign-key", "", "MQTT: the account's signing key (default ~/.config/livetable/NAME.key)")
	id := fs.String("id", "", "command id (default: a new one); the table applies an id once")
	pos, code, ok := parseCmd(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "tablectl %s: unexpected argument %q (a reason goes in --reason)\n", cmd, pos[0])
		return 2
	}
	rf.parsed(fs)
	if (cmd == "pause" || cmd == "void") && strings.TrimSpace(*reason) == "" {
		fmt.Fprintf(stderr, "tablectl %s: --reason is required\n", cmd)
		return 2
	}
	var correct card.Card
	if cmd == "correct" {
		c, err := card.Parse(*cardText)
		if err != nil {
			fmt.Fprintf(stderr, "tablectl correct: --card: %v\n", err)
			return 2
		}
		correct = c
		if *at < 0 {
			fmt.Fprintf(stderr, "tablectl correct: --at %d: a position in the shoe counts from 1\n", *at)
			return 2
		}
	} else if *at != 0 || *cardText != "" {
		fmt.Fprintf(stderr, "tablectl %s: --card and --at are for correct\n", cmd)
		return 2
	}
	rnd := commandRound(*roundText)
	switch {
	case rnd != "" && cmd != "void" && cmd != "correct":
		fmt.Fprintf(stderr, "tablectl %s: --round is for void and correct\n", cmd)
		return 2
	case rnd == "" && cmd == "void":
		// A void names the round the supervisor saw: read off the state
		// here, it would be whatever round is in play now, which may be
		// one that began after the round they meant settled.
		fmt.Fprintln(stderr, "tablectl void: --round is required: the round you mean to void, as tablectl status prints it "+
			"(\"round #22:10:05: next: ...\": --round '#22:10:05'). The table refuses the void if that round is no longer in play (exit status 6), so a void meant for a round that has settled never voids the next one")
		return 2
	}
	if rf.local() {
		req := localctl.Request{Command: cmd, Reason: *reason, Card: *cardText, Round: rnd, ID: *id}
		if cmd == "correct" {
			// The correct names its card, so that it fills that one or
			// is refused: read off the state now unless given.
			st, err := rf.localDo(localctl.Request{Command: "status"})
			if err != nil || st.State == nil {
				fmt.Fprintln(stderr, "tablectl: read the state:", err)
				return 1
			}
			w := waitingOf(*st.State)
			if req.At, err = correctTarget(stdout, w, *at, correct); err != nil {
				fmt.Fprintln(stderr, "tablectl correct:", err)
				return noTarget(w)
			}
			req.Round = correctRound(stdout, w, rnd)
		}
		if cmd == "void" {
			fmt.Fprintf(stdout, "voiding round %s\n", rnd)
		}
		rep, err := rf.localDo(req)
		if err != nil {
			fmt.Fprintln(stderr, "tablectl:", err)
			return 1
		}
		if !rep.Accepted {
			code := refusal(stdout, cmd, rep.ID, rep.Code, rep.Error)
			if cmd == "correct" && rep.State != nil {
				printLeft(stdout, waitingOf(*rep.State))
			}
			return code
		}
		if cmd == "shuffler-reset" {
			fmt.Fprintf(stdout, "shuffler reset by %s: it reads its sensors again and takes swap requests; resume the table if it is paused (tablectl resume)\n", rep.By)
			return 0
		}
		fmt.Fprintf(stdout, "%s accepted (%s, by %s)\n", cmd, rep.ID, rep.By)
		if cmd == "correct" && rep.State != nil {
			printLeft(stdout, waitingOf(*rep.State))
		}
		return 0
	}

	// Without --broker tablectl went over MQTT because no tabled answers
	// on this box (a stopped or crashed tabled, or another --data-dir):
	// say so, or the key's error reads as the only problem.
	via := ""
	if !rf.brokerSet {
		via = fmt.Sprintf("; no tabled socket at %s, so the command went over MQTT to %s: is tabled running with --data-dir %s?", rf.socket(), rf.broker, rf.g.dataDir)
	}
	if *as == "" && *signKey == "" {
		fmt.Fprintf(stderr, "tablectl %s: over MQTT a command is signed by a supervisor account: give --as NAME%s\n", cmd, via)
		return 2
	}
	keyPath := *signKey
	if keyPath == "" {
		keyPath = defaultKeyFile(*as)
	}
	key, err := supervisors.ReadKey(keyPath)
	if err != nil {
		fmt.Fprintf(stderr, "tablectl: %v (over MQTT a command is signed with the supervisor's key: --as NAME --sign-key FILE, written by `tablectl supervisor add`%s)\n", err, via)
		return 1
	}
	sc := mqttlink.SupervisorCommand{ID: *id, Type: cmd, By: *as, Reason: *reason, Round: rnd, Time: time.Now()}
	if cmd == "shuffler-reset" {
		sc.Type = mqttlink.CmdShufflerReset
	}
	if sc.ID == "" {
		sc.ID = fmt.Sprintf("tablectl-%d", time.Now().UnixNano())
	}
	cl, err := rf.connect()
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	defer cl.Disconnect(100)
	var before waiting
	if cmd == "correct" {
		sc.Card = correct.String()
		// The correct names its card: read off the retained state.
		if before, err = rf.retainedWaiting(cl); err != nil {
			fmt.Fprintln(stderr, "tablectl correct:", err)
			return 1
		}
		if sc.At, err = correctTarget(stdout, before, *at, correct); err != nil {
			fmt.Fprintln(stderr, "tablectl correct:", err)
			return noTarget(before)
		}
		sc.Round = correctRound(stdout, before, rnd)
		sc.Time = time.Now()
	}
	if cmd == "void" {
		fmt.Fprintf(stdout, "voiding round %s\n", rnd)
	}
	payload, err := mqttlink.SignSupervisor(key, rf.root(), sc)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 2
	}
	replies := make(chan []byte, 16)
	if tok := cl.Subscribe(rf.root()+"replies", 1, func(_ paho.Client, m paho.Message) { replies <- m.Payload() }); !tok.WaitTimeout(rf.timeout) || tok.Error() != nil {
		fmt.Fprintln(stderr, "tablectl: subscribe to replies failed (does the broker's ACL let this user read them?)")
		return 1
	}
	if tok := cl.Publish(rf.root()+"commands/supervisor", 1, false, payload); !tok.WaitTimeout(rf.timeout) || tok.Error() != nil {
		fmt.Fprintln(stderr, "tablectl: publish failed")
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), rf.timeout)
	defer cancel()
	for {
		select {
		case b := <-replies:
			var r struct {
				ID       string `json:"id"`
				Accepted bool   `json:"accepted"`
				Reason   string `json:"reason"`
				Code     string `json:"code"`
			}
			if json.Unmarshal(b, &r) != nil || r.ID != sc.ID {
				continue
			}
			if !r.Accepted {
				code := refusal(stdout, cmd, sc.ID, r.Code, r.Reason)
				if code == exitMisreadAt {
					// What waits now, as the retained state says.
					if left, err := rf.retainedWaiting(cl); err == nil {
						printLeft(stdout, left)
					}
				}
				return code
			}
			if cmd == "shuffler-reset" {
				fmt.Fprintf(stdout, "shuffler reset (%s, by %s): it reads its sensors again and takes swap requests; resume the table if it is paused\n", sc.ID, sc.By)
				return 0
			}
			fmt.Fprintf(stdout, "%s accepted (%s, by %s)\n", cmd, sc.ID, sc.By)
			if cmd == "correct" {
				// What the state said before, less the card corrected.
				left := before
				if i := slices.Index(left.at, sc.At); i >= 0 {
					left.at = slices.Delete(slices.Clone(left.at), i, i+1)
				}
				left.next, left.n = "", max(left.n-1, 0)
				printLeft(stdout, left)
			}
			return 0
		case <-ctx.Done():
			// No verdict: the table may have applied it (a reply lost or
			// slow), so not "refused": send it again with the same --id.
			fmt.Fprintf(stderr, "tablectl: no reply to %s within %s: no verdict, the table may have applied it; run it again with --id %s to learn (a broker ACL that drops the publication, or the table's own MQTT user from --config without --user, looks like this)\n", cmd, rf.timeout, sc.ID)
			return exitNoVerdict
		}
	}
}

func cardsText(cs []card.Card) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, " ")
}

// waiting is what a state says of the cards waiting for a correction.
type waiting struct {
	// at are their positions in the shoe, the next to correct first
	// (the state's misreads_at); empty from a tabled older than them.
	at []int
	// next is the shoe's report of the next to correct; n how many wait.
	next string
	n    int
	// round is the state's round ("" between rounds).
	round string
}

func waitingOf(st table.State) waiting {
	w := waiting{at: st.MisreadsAt, next: st.Misread, n: st.MisreadsPending, round: st.Round.ID}
	if len(w.at) == 0 && st.MisreadAt > 0 {
		w.at = []int{st.MisreadAt}
	}
	if w.n == 0 && w.next != "" {
		w.n = 1
	}
	return w
}

// retainedWaiting reads the table's retained state off the broker.
func (rf *remoteFlags) retainedWaiting(cl paho.Client) (waiting, error) {
	b, err := rf.retainedState(cl)
	if errors.Is(err, errNoState) {
		return waiting{}, fmt.Errorf("%w; --at N names the card to correct", err)
	}
	if err != nil {
		return waiting{}, err
	}
	// Only the fields it needs: the wire's state is not table.State.
	var env struct {
		Data struct {
			Misread    string `json:"misread"`
			Misreads   int    `json:"misreads_pending"`
			MisreadAt  int    `json:"misread_at"`
			MisreadsAt []int  `json:"misreads_at"`
			Round      struct {
				ID string `json:"id"`
			} `json:"round"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return waiting{}, fmt.Errorf("the table's state: %w", err)
	}
	d := env.Data
	w := waitingOf(table.State{Misread: d.Misread, MisreadsPending: d.Misreads, MisreadAt: d.MisreadAt, MisreadsAt: d.MisreadsAt})
	w.round = d.Round.ID
	return w, nil
}

// correctRound is the round a correct names: --round when given, else
// the state's round, read with the card's position (the card is read
// off the table now, so the round is the one in play now; naming it
// still fences a correct that travels past its round's end). It prints
// which round.
func correctRound(w io.Writer, st waiting, given string) string {
	switch {
	case given != "":
		fmt.Fprintf(w, "for round %s\n", given)
		return given
	case st.round != "":
		fmt.Fprintf(w, "for round %s (the round the state shows; --round names another)\n", st.round)
	}
	return st.round
}

// correctTarget is the position the correct names: at when given, else
// the next to correct as the state says, and prints which card the
// correct is for. A state of a tabled older than positions names none:
// the correct then names none either (the next waiting is filled).
func correctTarget(w io.Writer, st waiting, at int, c card.Card) (int, error) {
	switch {
	case at > 0:
		fmt.Fprintf(w, "correcting card %d of the shoe with %s\n", at, c)
		return at, nil
	case len(st.at) > 0:
		what := ""
		if st.next != "" {
			what = " (" + st.next + ")"
		}
		fmt.Fprintf(w, "correcting card %d of the shoe%s with %s\n", st.at[0], what, c)
		return st.at[0], nil
	case st.n > 0:
		fmt.Fprintf(w, "correcting the next card waiting (%s) with %s: this tabled does not name the cards' positions\n", st.next, c)
		return 0, nil
	}
	return 0, errors.New("no card waits for a correction (status says what the table waits for)")
}

// noTarget is the exit status of a correct tablectl does not send, having
// found no card to name in the state: none waits (exitNoMisread, what the
// table would answer), or the state could not say.
func noTarget(st waiting) int {
	if st.n == 0 && len(st.at) == 0 {
		return exitNoMisread
	}
	return exitRefused
}

// printLeft says what still waits for a correction.
func printLeft(w io.Writer, st waiting) {
	switch {
	case len(st.at) > 0:
		next := ""
		if st.next != "" {
			next = " (" + st.next + ")"
		}
		fmt.Fprintf(w, "still waiting for a correction: %d (cards %s of the shoe), the next: card %d%s\n", len(st.at), positions(st.at), st.at[0], next)
	case st.n > 0 && st.next == "":
		fmt.Fprintf(w, "still waiting for a correction: %d (tablectl status names the next)\n", st.n)
	case st.n > 0:
		fmt.Fprintf(w, "still waiting for a correction: %d, the next: %s\n", st.n, st.next)
	default:
		fmt.Fprintln(w, "no card waits for a correction")
	}
}

func positions(at []int) string {
	parts := make([]string, len(at))
	for i, n := range at {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, " ")
}
