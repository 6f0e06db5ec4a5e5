package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/livetable/livetable/table/card"
)

// remoteFlags address a running table over MQTT.
type remoteFlags struct {
	broker, studio, table, user, pass string
	timeout                           time.Duration
}

func (rf *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&rf.broker, "broker", "tcp://127.0.0.1:1883", "MQTT broker of the table, or the nodes of a cluster comma-separated (tried in order)")
	fs.StringVar(&rf.studio, "studio", "studio1", "studio id")
	fs.StringVar(&rf.table, "table", "table1", "table id")
	fs.StringVar(&rf.user, "user", "", "MQTT username")
	fs.StringVar(&rf.pass, "password", "", "MQTT password")
	fs.DurationVar(&rf.timeout, "timeout", 5*time.Second, "how long to wait for the table")
}

func (rf *remoteFlags) root() string { return "livetable/" + rf.studio + "/" + rf.table + "/" }

func (rf *remoteFlags) connect() (paho.Client, error) {
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

// runStatus prints the table's retained state.
func runStatus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tablectl status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var rf remoteFlags
	rf.register(fs)
	raw := fs.Bool("json", false, "print the state JSON as published")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	c, err := rf.connect()
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	defer c.Disconnect(100)
	got := make(chan []byte, 2)
	status := make(chan string, 2)
	// QoS 0: a one-off read of retained messages needs no session, and a
	// NATS cluster creates a replicated JetStream consumer for every QoS 1
	// subscription (about a second each, docs/deploy.md).
	c.Subscribe(rf.root()+"state", 0, func(_ paho.Client, m paho.Message) { got <- m.Payload() })
	c.Subscribe(rf.root()+"status", 0, func(_ paho.Client, m paho.Message) { status <- string(m.Payload()) })
	select {
	case b := <-got:
		if *raw {
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
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			fmt.Fprintln(stderr, "tablectl: state:", err)
			return 1
		}
		d := env.Data
		online := "unknown"
		select {
		case online = <-status:
		case <-time.After(200 * time.Millisecond):
		}
		fmt.Fprintf(stdout, "table %s/%s (%s), game %s, phase %s, last event #%d, %d rounds\n", rf.studio, rf.table, online, d.Game, d.Phase, d.Seq, d.Rounds)
		if d.Paused {
			fmt.Fprintf(stdout, "PAUSED: %s\n", d.Why)
		}
		fmt.Fprintf(stdout, "round %s: next: %s\n", d.Round.ID, d.Round.Next)
		fmt.Fprintf(stdout, "shoe %s: %d dealt, %d left, cut card %v\n", d.Shoe.ID, d.Shoe.Dealt, d.Shoe.Decks*52-d.Shoe.Dealt, d.Shoe.Cut)
		for _, a := range d.Alarms {
			fmt.Fprintf(stdout, "ALARM %s: %s\n", a.Code, a.Message)
		}
		return 0
	case <-time.After(rf.timeout):
		fmt.Fprintln(stderr, "tablectl: no state from the table (is tabled running, and --studio/--table right?)")
		return 1
	}
}

// runSupervisor sends pause, resume, void or correct and prints the reply.
func runSupervisor(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tablectl "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var rf remoteFlags
	rf.register(fs)
	by := fs.String("by", os.Getenv("USER"), "who (recorded in the journal)")
	reason := fs.String("reason", "", "why (recorded in the journal)")
	token := fs.String("token", os.Getenv("LIVETABLE_SUPERVISOR_TOKEN"), "supervisor token (or $LIVETABLE_SUPERVISOR_TOKEN)")
	cardText := fs.String("card", "", "correct: the right card, e.g. Qh")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (cmd == "pause" || cmd == "void") && strings.TrimSpace(*reason) == "" {
		fmt.Fprintf(stderr, "tablectl %s: --reason is required\n", cmd)
		return 2
	}
	msg := map[string]any{"schema": 1, "id": fmt.Sprintf("tablectl-%d", time.Now().UnixNano()), "type": cmd,
		"by": *by, "reason": *reason, "token": *token}
	if cmd == "correct" {
		c, err := card.Parse(*cardText)
		if err != nil {
			fmt.Fprintf(stderr, "tablectl correct: --card: %v\n", err)
			return 2
		}
		msg["card"] = c.String()
	}
	cl, err := rf.connect()
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	defer cl.Disconnect(100)
	replies := make(chan []byte, 16)
	if tok := cl.Subscribe(rf.root()+"replies", 1, func(_ paho.Client, m paho.Message) { replies <- m.Payload() }); !tok.WaitTimeout(rf.timeout) || tok.Error() != nil {
		fmt.Fprintln(stderr, "tablectl: subscribe to replies failed")
		return 1
	}
	payload, _ := json.Marshal(msg)
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
			}
			if json.Unmarshal(b, &r) != nil || r.ID != msg["id"] {
				continue
			}
			if !r.Accepted {
				fmt.Fprintf(stdout, "%s refused: %s\n", cmd, r.Reason)
				return 1
			}
			fmt.Fprintf(stdout, "%s accepted\n", cmd)
			return 0
		case <-ctx.Done():
			fmt.Fprintf(stderr, "tablectl: no reply to %s within %s\n", cmd, rf.timeout)
			return 1
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
