package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestJournalBehindOutboxProcess is issue 16's report replayed on the real
// binaries: a demo table plays, stops, and its journal's newest segment is
// cut back to its 60-byte header (a restore from an older backup) while
// its outbox keeps what it published. `tablectl journal verify` then
// fails naming the gap; tabled refuses to start, naming both seqs; after
// `tablectl journal accept-loss` tabled starts paused with an alarm at the
// seq after the highest published one, and (the demo's supervisor
// resuming it) plays on above it. The backend never receives a seq with
// two contents.
func TestJournalBehindOutboxProcess(t *testing.T) {
	tablectl := buildTablectl(t)
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	dt := newDemoTable(t, mosq.URL(), "gap", "journal: {segment_size: 64KiB, checkpoint_every: 2}\n")
	d, sub, data := dt.d, dt.sub, dt.data
	journalDir := filepath.Join(data, "journal")
	segments := func() []string {
		names, _ := filepath.Glob(filepath.Join(journalDir, "*.ltj"))
		sort.Strings(names)
		return names
	}
	published := dt.published

	d.start()
	newest := func() int64 {
		segs := segments()
		if len(segs) < 2 {
			return 0
		}
		fi, err := os.Stat(segs[len(segs)-1])
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	waitUntil(t, d, func() bool { return newest() > 8<<10 }, "the demo plays into a second segment")
	d.stop()
	last := published()
	waitUntil(t, d, func() bool { return sub.MaxSeq() == last }, "the backend has every event")

	segs := segments()
	require.NoError(t, os.Truncate(segs[len(segs)-1], 60), "the newest segment back to its header")

	code, text := tablectl("journal", "verify", "--data-dir", data)
	require.Equal(t, 1, code, text)
	assert.Contains(t, text, fmt.Sprintf("the outbox published up to seq %d", last))
	assert.Contains(t, text, "journal behind the outbox")

	// tabled refuses, naming both seqs.
	b := dt.refusedStart("a journal behind the outbox")
	assert.Contains(t, b, fmt.Sprintf("but the outbox published up to seq %d", last))
	assert.Contains(t, b, "the journal's last event is seq ")
	assert.Equal(t, last, published(), "the refusal published nothing")

	code, text = tablectl("journal", "accept-loss", "--data-dir", data, "--by", "ops")
	require.Equal(t, 2, code, "a reason is required: %s", text)
	code, text = tablectl("journal", "accept-loss", "--data-dir", data, "--by", "ops", "--reason", "restored from backup")
	require.Equal(t, 0, code, text)
	assert.Contains(t, text, fmt.Sprintf("number events from %d", last+1))

	d.start()
	defer d.stop()
	waitUntil(t, d, func() bool { return sub.MaxSeq() > last+50 }, "play goes on above the lost seqs")
	d.stop()

	// Every seq the backend got has one content; the first after the
	// published ones is the alarm naming the lost seqs.
	contents := oneContentPerSeq(t, sub)
	alarm := contents[last+1]
	assert.Contains(t, alarm, `alarm{"code":"seq_gap"`)
	assert.Contains(t, alarm, "restored from backup")
	assert.Regexp(t, fmt.Sprintf(`lost from the journal: seq \d+-%d; numbering continues at %d`, last, last+1), alarm)
	assert.Empty(t, sub.Missing(), "no seq is missing")

	code, text = tablectl("journal", "verify", "--data-dir", data)
	assert.Equal(t, 0, code, text)
}

// waitUntil polls cond for up to two minutes, failing with the daemon's
// log.
func waitUntil(t *testing.T, d *daemon, cond func() bool, what string) {
	t.Helper()
	for end := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within 2 minutes; log:\n%s", what, d.logTail())
		}
	}
}

// demoTable is a demo table (tabled with its simulated players, backend
// and supervisor) run as a process on a broker, with a backend's
// persistent session on its events: the setup the backup, restore and
// journal-damage tests share.
type demoTable struct {
	t      *testing.T
	d      *daemon
	cfg    string                   // the configuration file
	data   string                   // the data directory
	backup string                   // where backUp copies the data directory
	root   string                   // the table's topic root
	sub    *mqttlinktest.Subscriber // the backend, subscribed to root/events
}

// newDemoTable writes the configuration of demo table name (studio it)
// on the broker at url, extra (YAML lines) appended, builds tabled and
// subscribes the table's backend; the daemon is not started yet.
func newDemoTable(t *testing.T, url, name, extra string) *demoTable {
	t.Helper()
	bin := buildTabled(t)
	dir := t.TempDir()
	dt := &demoTable{t: t, cfg: filepath.Join(dir, "tabled.yaml"), data: filepath.Join(dir, "data"),
		backup: filepath.Join(dir, "backup"), root: "livetable/it/" + name + "/"}
	dt.sub = mqttlinktest.Subscribe(t, url, dt.root+"events", mqttlinktest.SubscriberOptions{ClientID: name + "-backend"})
	require.NoError(t, os.WriteFile(dt.cfg, fmt.Appendf(nil, `studio: it
table: %s
game: "000"
data_dir: %s
log_format: json
log_level: warn
timing: {settle: 20ms}
broker: {url: %q}
gpio: {sim: true}
console: {addr: "off"}
demo: {enabled: true, seed: 5, pace: 2ms, think: 5ms, betting: 150ms, seats: 3}
%s`, name, dt.data, url, extra), 0o644))
	dt.d = &daemon{t: t, bin: bin, cfg: dt.cfg, logPath: filepath.Join(dir, "tabled.log")}
	return dt
}

// published is the highest seq the table's outbox says it published.
func (dt *demoTable) published() uint64 {
	seq, err := mqttlink.OutboxPublishedSeq(nil, filepath.Join(dt.data, "outbox"))
	require.NoError(dt.t, err)
	return seq
}

// play runs the table until the backend has more than above, stops it,
// waits until the backend has everything it published, and returns the
// last seq published.
func (dt *demoTable) play(above uint64) uint64 {
	dt.t.Helper()
	dt.d.start()
	waitUntil(dt.t, dt.d, func() bool { return dt.sub.MaxSeq() > above }, "the demo plays")
	dt.d.stop()
	last := dt.published()
	waitUntil(dt.t, dt.d, func() bool { return dt.sub.MaxSeq() == last }, "the backend has every event")
	return last
}

// backUp copies the (stopped) table's data directory whole, as a backup.
func (dt *demoTable) backUp() {
	dt.t.Helper()
	out, err := exec.Command("cp", "-a", dt.data, dt.backup).CombinedOutput()
	require.NoError(dt.t, err, "backup: %s", out)
}

// refusedStart runs tabled once more and returns what it said: it must
// refuse to start (exit code 1, within a minute), for the reason why.
func (dt *demoTable) refusedStart(why string) string {
	dt.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := exec.CommandContext(ctx, dt.d.bin, "--config", dt.cfg).CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(dt.t, err, &ee, "tabled must refuse %s: %s", why, b)
	assert.Equal(dt.t, 1, ee.ExitCode(), "%s", b)
	return string(b)
}

// restore replaces the data directory with the backup, whole.
func (dt *demoTable) restore() {
	dt.t.Helper()
	require.NoError(dt.t, os.RemoveAll(dt.data))
	out, err := exec.Command("cp", "-a", dt.backup, dt.data).CombinedOutput()
	require.NoError(dt.t, err, "restore: %s", out)
}

// buildTablectl builds tablectl and returns a runner of it: its exit
// code and its output.
func buildTablectl(t *testing.T) func(args ...string) (int, string) {
	t.Helper()
	ctl := filepath.Join(t.TempDir(), "tablectl")
	out, err := exec.Command("go", "build", "-o", ctl, "../tablectl").CombinedOutput()
	require.NoError(t, err, "go build tablectl: %s", out)
	return func(args ...string) (int, string) {
		b, err := exec.Command(ctl, args...).CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(b)
		}
		require.NoError(t, err)
		return 0, string(b)
	}
}

// oneContentPerSeq is the events the backend got by seq (kind and data),
// failing when a seq came with two contents.
func oneContentPerSeq(t *testing.T, sub *mqttlinktest.Subscriber) map[uint64]string {
	t.Helper()
	contents := map[uint64]string{}
	for _, m := range sub.Messages() {
		var e struct {
			Seq  uint64          `json:"seq"`
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		}
		require.NoError(t, json.Unmarshal(m.Payload, &e))
		c := e.Kind + string(e.Data)
		if prev, ok := contents[e.Seq]; ok {
			require.Equal(t, prev, c, "seq %d published twice with other content", e.Seq)
		}
		contents[e.Seq] = c
	}
	return contents
}

// TestRestoredOlderDataDirProcess: a data directory restored whole from
// an older backup has a journal and an outbox that agree, so the
// continuity check passed and tabled numbered its events from where the
// backup ends: seqs the backend already held with other content (seen on
// a demo table: 10 seqs with two contents, not a line in the log). Now
// tabled reads its retained state at the broker before its table starts,
// refuses naming the seq published there, and after `tablectl journal
// accept-loss --published-seq` plays on above it, paused first with the
// alarm. The backend never receives a seq with two contents. With the
// broker down at that start, tabled waits for it (it started on its own
// seqs and, once the broker was back, published seqs 449-544 of a demo
// table a second time with other content), then refuses the same way.
func TestRestoredOlderDataDirProcess(t *testing.T) {
	tablectl := buildTablectl(t)
	// Persistence: the retained state, the witness, outlives the broker's
	// restart below.
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Persistence: true})
	dt := newDemoTable(t, mosq.URL(), "restore", "")
	d, sub, data, published := dt.d, dt.sub, dt.data, dt.published

	old := dt.play(20)
	dt.backUp()
	high := dt.play(old + 20)
	dt.restore()
	code, text := tablectl("journal", "verify", "--data-dir", data)
	require.Equal(t, 0, code, "journal and outbox of one backup agree: %s", text)

	// With the broker down, tabled waits for it instead of numbering
	// events from where the backup ends; once it is back, it refuses.
	mosq.Stop()
	d.start()
	waitUntil(t, d, func() bool {
		b, _ := os.ReadFile(d.logPath)
		return bytes.Contains(b, []byte("the table waits for it before it starts"))
	}, "tabled says it waits for the broker")
	assert.Equal(t, old, published(), "nothing published while the broker was down")
	mosq.Restart()
	waited := make(chan error, 1)
	go func() { waited <- d.cmd.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "tabled must refuse once the broker is back: %s", d.logTail())
		assert.Equal(t, 1, ee.ExitCode())
	case <-time.After(time.Minute):
		d.stop()
		t.Fatalf("tabled did not refuse within a minute of the broker's return; log:\n%s", d.logTail())
	}
	_ = d.logf.Close()
	logged, err := os.ReadFile(d.logPath)
	require.NoError(t, err)
	assert.Contains(t, string(logged), fmt.Sprintf("but the table's retained state at the broker names seq %d", high))
	assert.Equal(t, old, published(), "the wait and the refusal published nothing")

	// tabled refuses, naming the seq the broker holds.
	b := dt.refusedStart("a data directory older than what was published")
	// The journal may end past the outbox (events a stop journaled and
	// the outbox never took; a start republishes them), never before it.
	m := regexp.MustCompile(fmt.Sprintf(`the journal's last event is seq (\d+) and the outbox's seq %d, but the table's retained state at the broker names seq %d`, old, high)).FindStringSubmatch(b)
	require.NotNil(t, m, "the refusal names the three seqs: %s", b)
	journalSeq, err := strconv.ParseUint(string(m[1]), 10, 64)
	require.NoError(t, err)
	require.True(t, journalSeq >= old && journalSeq < high, "journal seq %d, outbox %d, broker %d", journalSeq, old, high)
	t.Logf("restored: journal seq %d, outbox %d, broker %d", journalSeq, old, high)
	assert.Contains(t, b, fmt.Sprintf("--published-seq %d", high))
	assert.Equal(t, old, published(), "the refusal published nothing")

	code, text = tablectl("journal", "accept-loss", "--data-dir", data, "--by", "ops", "--reason", "restored the older backup", "--published-seq", fmt.Sprint(high))
	require.Equal(t, 0, code, text)
	assert.Contains(t, text, fmt.Sprintf("events %d-%d lost", journalSeq+1, high))

	dt.play(high + 30)
	contents := oneContentPerSeq(t, sub)
	assert.Contains(t, contents[high+1], `alarm{"code":"seq_gap"`)
	assert.Contains(t, contents[high+1], "restored the older backup")
	assert.Empty(t, sub.Missing(), "no seq is missing")
}
