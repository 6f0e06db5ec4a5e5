package console

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// BenchmarkFanout is the pump's work per event: encode once, queue for
// every browser. The browsers' own writes happen in their handlers.
func BenchmarkFanout(b *testing.B) {
	st := dealingState()
	ev := table.Event{Seq: 9, Time: epoch, Table: "table1", Round: st.Round.ID, Body: &st}
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("browsers=%d", n), func(b *testing.B) {
			h := newHub(4)
			clients := make([]*client, n)
			for i := range clients {
				clients[i], _ = h.join()
			}
			b.ReportAllocs()
			for b.Loop() {
				n, err := h.broadcast(func() ([]byte, error) { return encodeSSE(ev) })
				if err != nil {
					b.Fatal(err)
				}
				if n != 0 {
					b.Fatal("dropped")
				}
				for _, c := range clients {
					<-c.ch
				}
			}
		})
	}
}

// BenchmarkCommandToBrowser is the latency a supervisor sees: a command
// submitted to a real controller until a browser's event stream carries
// the snapshot that shows it (pause, then resume, alternately).
func BenchmarkCommandToBrowser(b *testing.B) {
	rs, err := rules.Game("000")
	require.NoError(b, err)
	opts := table.DefaultOptions(rs)
	opts.Idle = true
	ctl, err := table.New(opts, zerolog.Nop())
	require.NoError(b, err)
	copts := DefaultOptions()
	copts.Addr = "127.0.0.1:0"
	srv, err := New(copts, ctl, nil, nil, zerolog.Nop())
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ctl.Run(ctx, nil) }()
	go func() { _ = srv.Run(ctx) }()
	<-srv.Ready()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+srv.Addr()+"/events", nil)
	require.NoError(b, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	// waitState reads until a snapshot with the paused flag wanted.
	waitState := func(paused bool) {
		want := fmt.Sprintf(`"paused":%t`, paused)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, `data: {"schema":1,"seq":0`) && strings.Contains(line, want) {
				return
			}
		}
		b.Fatalf("stream ended: %v", sc.Err())
	}
	waitState(false)
	paused := false
	for b.Loop() {
		cmd := table.Supervisor{Command: "pause", By: "bench", Reason: "bench"}
		if paused {
			cmd = table.Supervisor{Command: "resume", By: "bench"}
		}
		if err := ctl.Submit(ctx, cmd); err != nil {
			b.Fatal(err)
		}
		paused = !paused
		waitState(paused)
	}
}
