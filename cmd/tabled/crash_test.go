package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	simdealer "github.com/livetable/livetable/simulators/dealer"
	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/strategy"
)

// TestCrashRecovery is issue 7's proof: a scripted run of rounds, the
// daemon killed with SIGKILL at random points and restarted each time,
// must give the backend the same game (every card, decision and
// settlement, in order, each exactly once) as an uninterrupted run of the
// same script. Pause, resume and phase events differ by nature (a restart
// mid-round pauses the table until a supervisor resumes it) and are left
// out of the comparison.
func TestCrashRecovery(t *testing.T) {
	rounds, kills := 500, 50
	if testing.Short() {
		rounds, kills = 60, 6
	}
	bin := buildTabled(t)
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})

	start := time.Now()
	calm := playScript(t, bin, mosq.URL(), "calm", rounds, 0, nil)
	t.Logf("uninterrupted run: %d rounds in %v", rounds, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	crashy := playScript(t, bin, mosq.URL(), "crashy", rounds, kills, nil)
	t.Logf("run with %d kills: %d rounds in %v", kills, rounds, time.Since(start).Round(time.Millisecond))
	t.Logf("uninterrupted: %d game events, %d rounds; with %d kills: %d game events, %d duplicates dropped, %d restarts mid-round",
		len(calm.game), calm.settled, crashy.kills, len(crashy.game), crashy.dups, crashy.midRound)
	for _, r := range []scriptRun{calm, crashy} {
		t.Logf("journal (256 KiB segments, 1 MiB kept, a checkpoint every 20 rounds): %d segments from record %d, %d checkpoints retained",
			r.segments, r.firstSeq, r.checkpoints)
		if !testing.Short() {
			assert.Greater(t, r.firstSeq, uint64(1), "retention deleted segments while the table played")
		}
		assert.NotZero(t, r.checkpoints)
	}
	require.Equal(t, kills, crashy.kills)
	assert.Zero(t, crashy.gaps, "no event number is missing")
	require.Equal(t, len(calm.game), len(crashy.game), "the same number of game events")
	for i := range calm.game {
		if calm.game[i] != crashy.game[i] {
			t.Fatalf("game event %d differs:\n uninterrupted: %s\n with crashes:  %s", i, calm.game[i], crashy.game[i])
		}
	}
}

// scriptRun is what the backend saw of one scripted run.
type scriptRun struct {
	game     []string // normalised game events, in order
	settled  int
	kills    int
	dups     int
	gaps     int
	midRound int
	resends  int // resend commands the backend sent for events it missed
	filled   int // events that came after a later one (by a resend)
	// The journal at the end: its first retained record, its segments,
	// and how many checkpoints it holds.
	firstSeq    uint64
	segments    int
	checkpoints int
}

func buildTabled(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tabled")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// TestBrokerOutage is issue 6's delivery proof: 100 rounds during which
// the broker is killed mid-round and restarted 10 s later, and the daemon
// is killed and restarted; the backend still sees every event of the
// uninterrupted run exactly once, in order (after dropping duplicates by
// sequence number).
func TestBrokerOutage(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 40
	}
	bin := buildTabled(t)
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Persistence: true})
	calm := playScript(t, bin, mosq.URL(), "calm", rounds, 0, nil)
	var outageAt, daemonAt time.Duration
	start := time.Now()
	stormy := playScript(t, bin, mosq.URL(), "stormy", rounds, 0, func(settled int, d *daemon) bool {
		switch {
		case settled >= rounds/3 && outageAt == 0:
			outageAt = time.Since(start)
			mosq.Kill()
			time.Sleep(10 * time.Second)
			mosq.Restart()
			return true
		case settled >= 2*rounds/3 && daemonAt == 0:
			daemonAt = time.Since(start)
			d.kill()
			d.start()
			return true
		}
		return false
	})
	t.Logf("broker killed at %v for 10 s, daemon killed at %v; uninterrupted %d game events, with outages %d, %d duplicates dropped, %d gaps, %d resends asked, %d events recovered by them",
		outageAt.Round(time.Millisecond), daemonAt.Round(time.Millisecond), len(calm.game), len(stormy.game), stormy.dups, stormy.gaps, stormy.resends, stormy.filled)
	require.NotZero(t, outageAt)
	require.NotZero(t, daemonAt)
	assert.Zero(t, stormy.gaps)
	require.Equal(t, calm.game, stormy.game)
}

// playScript runs one table to `rounds` settlements, killing it `kills`
// times at random points; disrupt, when set, is called as rounds settle
// and may break things (it returns true when it did).
func playScript(t *testing.T, bin, broker, name string, rounds, kills int, disrupt func(settled int, d *daemon) bool) scriptRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()

	so := simshoe.DefaultOptions()
	so.Seed, so.Penetration = 7, 0.5
	dev, err := simshoe.New(so, zerolog.Nop())
	require.NoError(t, err)
	devCtx, devStop := context.WithCancel(context.Background())
	devDone := make(chan struct{})
	go func() { defer close(devDone); _ = dev.Run(devCtx) }()
	defer func() { devStop(); _ = dev.Close(); <-devDone }()

	tableID := "crash-" + name
	cfgPath := filepath.Join(dir, "tabled.yaml")
	cfg := fmt.Sprintf(`studio: it
table: %s
game: "000"
data_dir: %s
log_format: json
log_level: warn
timing: {betting: 1h, last_call: 1s, insurance: 1h, decision: 1h, settle: 20ms}
broker: {url: %q}
shoe: {path: %q, silence_timeout: 1h}
journal: {segment_size: 256KiB, max_size: 1MiB, checkpoint_every: 20}
gpio: {sim: true, shuffler: false}
console: {addr: "127.0.0.1:0"}
`, tableID, filepath.Join(dir, "data"), broker, dev.Path())
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	// The backend's supervisor, who resumes the table after each restart
	// mid-round with a signed command.
	acct, supKey, err := supervisors.New("crash-test", supervisors.RoleSupervisor, "crash-test-password")
	require.NoError(t, err)
	accts := &supervisors.List{}
	require.NoError(t, accts.Add(acct))
	require.NoError(t, accts.Save(filepath.Join(dir, "data", supervisors.FileName)))

	d := &daemon{t: t, bin: bin, cfg: cfgPath, logPath: filepath.Join(dir, "tabled.log")}
	d.start()
	defer d.stop()

	root := "livetable/it/" + tableID + "/"
	be := newBackend(t, broker, root, name)
	be.supKey = supKey
	defer be.close()
	go func() {
		_ = simdealer.New(dev, simdealer.Options{}, zerolog.New(zerolog.NewTestWriter(t))).Run(ctx, be.states)
	}()

	rng := rand.New(rand.NewPCG(99, 1))
	killed := 0
	// A hang is a table that stops settling rounds, not a slow machine: the
	// run once had 3 minutes in all, and on a loaded 2-core box (other
	// test binaries, -race) 500 rounds and 50 restarts took longer and
	// failed as "timed out" while the table was dealing. The watch fails
	// only when no round settles for stallAfter while nothing restarts the
	// daemon; the package's -timeout bounds the rest.
	const stallAfter = 2 * time.Minute
	progress, progressAt := be.settledCount(), time.Now()
	stalled := func() bool {
		if n := be.settledCount(); n != progress {
			progress, progressAt = n, time.Now()
		}
		return time.Since(progressAt) > stallAfter
	}
	for {
		if be.settledCount() >= rounds {
			break
		}
		if disrupt != nil && disrupt(be.settledCount(), d) {
			progressAt = time.Now() // the disruption's own wait is not a stall
			continue
		}
		if killed < kills {
			time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond) // the kill's random moment
			d.kill()
			killed++
			d.start()
			progressAt = time.Now()
			continue
		}
		time.Sleep(50 * time.Millisecond) // a poll of the backend's count
		if stalled() {
			t.Fatalf("%s: no round settled for %v, after %d settlements and %d kills; last state %s; pending %v; last events %s; daemon log:\n%s",
				name, stallAfter, be.settledCount(), killed, be.lastState, be.pending, be.debugTail(), d.logTail())
		}
	}
	d.stop()
	run := be.result(rounds, killed)
	jr, _, err := journal.Open(journal.Options{Dir: filepath.Join(dir, "data", "journal"), ReadOnly: true}, zerolog.Nop())
	require.NoError(t, err)
	defer jr.Close()
	st := jr.Stats()
	run.firstSeq, run.segments = st.FirstSeq, st.Segments
	require.NoError(t, jr.Replay(0, func(r journal.Record) error {
		if r.Kind == table.CheckpointKind {
			run.checkpoints++
		}
		return nil
	}))
	return run
}

// daemon is the tabled process under test.
type daemon struct {
	t       *testing.T
	bin     string
	cfg     string
	logPath string
	cmd     *exec.Cmd
	logf    *os.File
}

func (d *daemon) start() {
	d.t.Helper()
	f, err := os.OpenFile(d.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(d.t, err)
	d.logf = f
	d.cmd = exec.Command(d.bin, "--config", d.cfg)
	d.cmd.Stdout, d.cmd.Stderr = f, f
	require.NoError(d.t, d.cmd.Start())
}

func (d *daemon) kill() {
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	_, _ = d.cmd.Process.Wait()
	_ = d.logf.Close()
}

func (d *daemon) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _, _ = d.cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
	}
	_ = d.logf.Close()
}

func (d *daemon) logTail() string {
	b, _ := os.ReadFile(d.logPath)
	if len(b) > 12000 {
		b = b[len(b)-12000:]
	}
	return string(b)
}

// backend plays the streaming backend and the supervisor over MQTT: it
// closes bets, decides by basic strategy, resumes a table paused by a
// restart, and retries every command until it is answered. Command ids
// derive from the event that prompted them, so a retry is recognised.
type backend struct {
	t      *testing.T
	root   string
	client paho.Client
	states chan table.Event
	strat  *strategy.Table

	mu        sync.Mutex // guards the following
	contig    uint64     // every event up to this seq is here
	seenSeq   uint64     // the highest seq known to exist (events and states)
	gapAt     uint64     // contig when a gap was first seen, 0 for none
	askedAt   time.Time  // the last resend, so a slow one is not asked again at once
	resends   int
	filled    int // events that arrived after a later one: gaps filled
	events    map[uint64]json.RawMessage
	kinds     map[uint64]string
	rounds    map[uint64]string
	maxSeq    uint64
	dups      int
	settled   int
	pending   map[string][]byte // command id -> payload, until answered
	next      map[string]func() // command id -> the command to send once it is applied
	answered  map[string]bool
	midRound  int
	retries   int
	supKey    ed25519.PrivateKey // signs the resume
	lastState string
	// The first shoe and the first betting phase race at start (two
	// devices); the backend bets only once both are there, so every run
	// of the script has one event order.
	shoeSeen   bool
	betPending uint64
	stop       chan struct{}
}

type envelope struct {
	Seq   uint64          `json:"seq"`
	Round string          `json:"round"`
	Kind  string          `json:"kind"`
	Data  json.RawMessage `json:"data"`
}

func newBackend(t *testing.T, broker, root, name string) *backend {
	strat, err := strategy.ForGame("000")
	require.NoError(t, err)
	b := &backend{t: t, root: root, states: make(chan table.Event, 1024), strat: strat,
		events: map[uint64]json.RawMessage{}, kinds: map[uint64]string{}, rounds: map[uint64]string{},
		pending: map[string][]byte{}, answered: map[string]bool{}, next: map[string]func(){}, stop: make(chan struct{})}
	o := paho.NewClientOptions().AddBroker(broker).SetClientID("backend-" + name).SetCleanSession(false).
		SetStore(mqttlink.NewStore()). // paho's MemoryStore races on a reconnect
		SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(100 * time.Millisecond).SetOrderMatters(true)
	o.SetOnConnectHandler(func(c paho.Client) {
		c.Subscribe(root+"events", 1, func(_ paho.Client, m paho.Message) { b.onEvent(m.Payload()) })
		c.Subscribe(root+"replies", 1, func(_ paho.Client, m paho.Message) { b.onReply(m.Payload()) })
		c.Subscribe(root+"state", 1, func(_ paho.Client, m paho.Message) { b.onState(m.Payload()) })
		// A broker that crashed may have lost the newest events and the
		// retained state with them, leaving nothing that shows the gap:
		// after every reconnection, ask for whatever came after the last
		// event held (the table says when there is nothing).
		b.mu.Lock()
		if b.contig > 0 {
			b.askLocked(b.contig+1, 0)
		}
		b.mu.Unlock()
	})
	b.client = paho.NewClient(o)
	require.True(t, b.client.Connect().WaitTimeout(10*time.Second))
	go b.retry()
	return b
}

func (b *backend) close() {
	close(b.stop)
	b.client.Disconnect(100)
}

func (b *backend) onEvent(payload []byte) {
	var e envelope
	if json.Unmarshal(payload, &e) != nil || e.Seq == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, seen := b.events[e.Seq]; seen {
		b.dups++
		return
	}
	b.events[e.Seq], b.kinds[e.Seq], b.rounds[e.Seq] = e.Data, e.Kind, e.Round
	if e.Seq < b.maxSeq {
		b.filled++
	}
	b.maxSeq = max(b.maxSeq, e.Seq)
	b.seenSeq = max(b.seenSeq, e.Seq)
	for {
		if _, ok := b.events[b.contig+1]; !ok {
			break
		}
		b.contig++
	}
	switch e.Kind {
	case "round_settled", "round_void":
		b.settled++
	case "phase":
		var p struct {
			Phase string `json:"phase"`
		}
		if json.Unmarshal(e.Data, &p) == nil && p.Phase == "betting" {
			if !b.shoeSeen {
				b.betPending = e.Seq
				return
			}
			b.betLocked(e.Seq)
		}
	case "shoe_in_play":
		b.shoeSeen = true
		if b.betPending != 0 {
			b.betLocked(b.betPending)
			b.betPending = 0
		}
	case "insurance_offered":
		// One answer at a time: a restart's pause rejects the answers that
		// come before the resume and they are sent again, so two answers
		// sent together could be applied in either order, and the run
		// would differ from the uninterrupted one.
		first := fmt.Sprintf("ins-%d-1", e.Seq)
		b.next[first] = func() {
			b.sendLocked(fmt.Sprintf("ins-%d-2", e.Seq), map[string]any{"type": "insurance", "seat": 2, "take": false})
		}
		b.sendLocked(first, map[string]any{"type": "insurance", "seat": 1, "take": false})
	case "decision_requested":
		var d struct {
			Seat      int      `json:"seat"`
			Total     int      `json:"total"`
			Soft      bool     `json:"soft"`
			Cards     int      `json:"cards"`
			PairValue int      `json:"pair_value"`
			Up        int      `json:"up"`
			Options   []string `json:"options"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			return
		}
		s := strategy.Situation{Total: d.Total, Soft: d.Soft, Cards: d.Cards, PairValue: d.PairValue, Up: d.Up}
		for _, o := range d.Options {
			s.CanDouble = s.CanDouble || o == "double"
			s.CanSplit = s.CanSplit || o == "split"
		}
		b.sendLocked(fmt.Sprintf("dec-%d", e.Seq), map[string]any{"type": "decision", "seat": d.Seat, "action": b.strat.Decide(s).String()})
	}
}

// betLocked closes the bets of the betting phase that opened at seq.
func (b *backend) betLocked(seq uint64) {
	b.sendLocked(fmt.Sprintf("bets-%d", seq), map[string]any{"type": "bets_closed", "bets": []map[string]any{
		{"seat": 1, "player": "ann", "main": 1000, "side": map[string]int64{"perfect_pairs": 100}},
		{"seat": 2, "player": "bob", "main": 2000, "side": map[string]int64{"21+3": 100}},
	}})
}

// onState feeds the dealer and resumes a table a restart paused.
func (b *backend) onState(payload []byte) {
	var env struct {
		Data table.State `json:"data"`
	}
	if json.Unmarshal(payload, &env) != nil {
		return
	}
	st := env.Data
	b.mu.Lock()
	b.lastState = fmt.Sprintf("phase=%s paused=%v next=%q dealt=%d seq=%d", st.Phase, st.Paused, st.Round.Next, st.Shoe.Dealt, st.Seq)
	b.seenSeq = max(b.seenSeq, st.Seq)
	b.mu.Unlock()
	if st.Paused && strings.HasPrefix(st.PauseReason, "restarted in the middle") {
		b.mu.Lock()
		// One resume in flight at a time; each restart gets a new id (the
		// table remembers every id it answered).
		inFlight := false
		for id := range b.pending {
			inFlight = inFlight || strings.HasPrefix(id, "resume-")
		}
		if !inFlight {
			b.midRound++
			b.sendLocked(fmt.Sprintf("resume-%d", b.midRound), map[string]any{"type": "resume"})
		}
		b.mu.Unlock()
	}
	select {
	case b.states <- table.Event{Body: &st}:
	default:
	}
}

func (b *backend) onReply(payload []byte) {
	var r struct {
		ID       string `json:"id"`
		Accepted bool   `json:"accepted"`
		Reason   string `json:"reason"`
	}
	if json.Unmarshal(payload, &r) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !r.Accepted && strings.HasPrefix(r.Reason, "rate limited") {
		// Not applied and not remembered (the contract): the retry loop
		// sends it again, under the same id, once the sender's burst has
		// passed.
		return
	}
	if !r.Accepted && strings.Contains(r.Reason, "before the table's link started") {
		// A resume signed before the daemon's restart and delivered after
		// it: not applied, not remembered; the retry loop signs it again.
		return
	}
	payload, ok := b.pending[r.ID]
	delete(b.pending, r.ID)
	b.answered[r.ID] = true
	if ok && !r.Accepted && strings.HasPrefix(r.Reason, "table: paused") {
		// Asked while the table waited for the resume. That answer is
		// final for this id, so ask again under a new one.
		var cmd map[string]any
		_ = json.Unmarshal(payload, &cmd)
		base, _, _ := strings.Cut(r.ID, "~")
		b.retries++
		b.sendLocked(fmt.Sprintf("%s~%d", base, b.retries), cmd)
		return
	}
	base, _, _ := strings.Cut(r.ID, "~")
	if then := b.next[base]; then != nil {
		delete(b.next, base)
		then()
	}
}

// signResume is the supervisor's resume, signed now.
func (b *backend) signResume(id string) []byte {
	p, err := mqttlink.SignSupervisor(b.supKey, b.root, mqttlink.SupervisorCommand{ID: id, Type: "resume", By: "crash-test", Time: time.Now()})
	if err != nil {
		panic(err) // only line breaks in the fields fail, and there are none
	}
	return p
}

func (b *backend) sendLocked(id string, cmd map[string]any) {
	if b.answered[id] {
		return
	}
	cmd["id"], cmd["schema"] = id, 1
	if b.maxSeq > 0 && cmd["type"] != "resume" {
		// The newest event it had (contract 2.4.0), as a real backend
		// sends it: across the daemon's crashes it is never refused
		// stale (no loss was accepted). A retry sends these bytes again.
		cmd["seen"] = b.maxSeq
	}
	payload, _ := json.Marshal(cmd)
	if cmd["type"] == "resume" {
		payload = b.signResume(id)
	}
	b.pending[id] = payload
	topic := b.root + "commands/" + cmd["type"].(string)
	if cmd["type"] == "resume" {
		topic = b.root + "commands/supervisor"
	}
	b.client.Publish(topic, 1, false, payload)
}

// retry sends unanswered commands again (the daemon may have died with
// them); the table applies each id once.
func (b *backend) retry() {
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
		}
		b.mu.Lock()
		b.askForMissingLocked()
		ids := make([]string, 0, len(b.pending))
		for id := range b.pending {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			var cmd map[string]any
			_ = json.Unmarshal(b.pending[id], &cmd)
			topic := b.root + "commands/" + cmd["type"].(string)
			if cmd["type"] == "resume" {
				// Signed again: the table takes a signature only within
				// its window around the signing time.
				topic = b.root + "commands/supervisor"
				b.pending[id] = b.signResume(id)
			}
			b.client.Publish(topic, 1, false, b.pending[id])
		}
		b.mu.Unlock()
	}
}

// askForMissingLocked is a backend's gap repair: events known to exist
// (a later event, or a state whose seq is past the last event here) that
// are still missing a tick after they were first missed (an event and its
// state are in flight together, so the state may come first) are asked
// for again with a resend. A broker killed after acknowledging events it
// had not saved yet loses them; this gets them back from the table.
func (b *backend) askForMissingLocked() {
	if b.seenSeq <= b.contig {
		b.gapAt = 0
		return
	}
	if b.gapAt != b.contig+1 {
		b.gapAt = b.contig + 1 // first seen: give the in-flight events a tick
		return
	}
	if time.Since(b.askedAt) < time.Second {
		return
	}
	b.askLocked(b.contig+1, b.seenSeq)
}

// askLocked sends a resend of events from..to (to 0: the newest), under a
// new id each time.
func (b *backend) askLocked(from, to uint64) {
	b.askedAt = time.Now()
	b.resends++
	cmd := map[string]any{"schema": 1, "id": fmt.Sprintf("resend-%d-%d", from, b.resends), "type": "resend", "from": from}
	if to != 0 {
		cmd["to"] = to
	}
	payload, _ := json.Marshal(cmd)
	b.client.Publish(b.root+"commands/resend", 1, false, payload)
}

func (b *backend) settledCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.settled
}

var roundCode = regexp.MustCompile(`"#\d\d:\d\d:\d\d(-\d+)?"`)

// result normalises the stream up to the rounds-th settlement: game events
// only, round codes (start times) numbered in order, no deadlines.
func (b *backend) result(rounds, kills int) scriptRun {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := scriptRun{kills: kills, dups: b.dups, midRound: b.midRound, resends: b.resends, filled: b.filled}
	codes := map[string]int{}
	for seq := uint64(1); seq <= b.maxSeq && r.settled < rounds; seq++ {
		data, ok := b.events[seq]
		if !ok {
			r.gaps++
			continue
		}
		kind := b.kinds[seq]
		switch kind {
		case "phase", "paused", "resumed", "alarm":
			continue
		}
		code := b.rounds[seq]
		if _, ok := codes[code]; !ok && code != "" {
			codes[code] = len(codes) + 1
		}
		norm := roundCode.ReplaceAllString(string(data), `"#"`)
		r.game = append(r.game, fmt.Sprintf("r%d %s %s", codes[code], kind, bytes.TrimSpace([]byte(norm))))
		if kind == "round_settled" || kind == "round_void" {
			r.settled++
		}
	}
	return r
}

func (b *backend) debugTail() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sb strings.Builder
	for s := b.maxSeq - min(b.maxSeq, 40); s <= b.maxSeq; s++ {
		fmt.Fprintf(&sb, "\n%d %s %s %s", s, b.kinds[s], b.rounds[s], b.events[s])
	}
	return sb.String()
}
