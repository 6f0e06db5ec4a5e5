package mqttlink_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
)

// The crash test runs the link in a child process (this test binary again,
// in TestCrashChild) so it can be killed with SIGKILL like a daemon losing
// power: no goodbye, no flush beyond what was fsync'd.
const (
	envChild  = "MQTTLINK_CRASH_CHILD"
	envURL    = "MQTTLINK_CRASH_URL"
	envOutbox = "MQTTLINK_CRASH_OUTBOX"
	envFrom   = "MQTTLINK_CRASH_FROM"
	envTo     = "MQTTLINK_CRASH_TO"
)

// TestCrashChild is not a test on its own: it is the child process of
// TestMosquittoDaemonKilled, and returns at once without its environment.
func TestCrashChild(t *testing.T) {
	if os.Getenv(envChild) != "1" {
		return
	}
	from, _ := strconv.ParseUint(os.Getenv(envFrom), 10, 64)
	to, _ := strconv.ParseUint(os.Getenv(envTo), 10, 64)
	opts := mqttlink.DefaultOptions()
	opts.Studio, opts.Table = "s1", "t1"
	opts.BrokerURL = os.Getenv(envURL)
	opts.OutboxDir = os.Getenv(envOutbox)
	opts.ConnectRetryInterval = 100 * time.Millisecond
	l, err := mqttlink.New(opts, zerolog.New(os.Stderr).Level(zerolog.WarnLevel))
	require.NoError(t, err)
	events := make(chan table.Event, 64)
	go func() {
		// A dealer's pace, sped up: the parent kills us mid-stream.
		for seq := from; seq <= to; seq++ {
			events <- makeEvent(seq)
			time.Sleep(500 * time.Microsecond)
		}
	}()
	_ = l.Run(context.Background(), events, &mqttlinktest.Submitter{})
}

func startChild(t *testing.T, url, outbox string, from, to uint64) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), envChild+"=1", envURL+"="+url, envOutbox+"="+outbox,
		envFrom+"="+strconv.FormatUint(from, 10), envTo+"="+strconv.FormatUint(to, 10))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func TestMosquittoDaemonKilled(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, mq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{CleanSession: true})
	outbox := t.TempDir()

	child := startChild(t, mq.URL(), outbox, 1, totalEvents)
	require.Eventually(t, func() bool { return sub.MaxSeq() >= totalEvents/4 }, waitFor, poll)
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	_ = child.Wait()
	killedAt := sub.MaxSeq()
	require.Less(t, killedAt, uint64(totalEvents), "killed mid-stream")
	// The Will tells the backend the table went away.
	require.Eventually(t, func() bool {
		m := sub.MessagesOn(topics.Status)
		return len(m) > 0 && string(m[len(m)-1].Payload) == mqttlink.StatusOffline
	}, waitFor, poll)
	t.Logf("daemon killed after the subscriber saw seq %d", killedAt)
	spec := loadSpec(t)
	for _, m := range sub.MessagesOn(topics.Status) { // online, and the broker's Last Will
		require.NoError(t, spec.Validate("status", m.Payload), "%s", m.Payload)
	}

	// The restarted controller replays its journal from well before the
	// crash; the outbox skips what it already has and resends what the
	// broker never acknowledged.
	startChild(t, mq.URL(), outbox, killedAt/2, totalEvents)
	checkExactlyOnce(t, sub, totalEvents)
}
