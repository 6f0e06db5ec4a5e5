package lineproto

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/table/card"
)

// result is one call of the codec's callback, comparable.
type result struct {
	kind shoereader.MessageKind
	seq  uint32
	what string // the message's detail, or the error's class
}

func (r result) String() string { return fmt.Sprintf("%d#%d:%s", r.kind, r.seq, r.what) }

func errClass(err error) string {
	var me *shoereader.MalformedError
	switch {
	case errors.Is(err, shoereader.ErrNoise):
		return "noise"
	case errors.As(err, &me):
		return fmt.Sprintf("malformed#%d", me.Seq)
	case errors.Is(err, ErrChecksum):
		return "checksum"
	case errors.Is(err, ErrTooLong):
		return "too_long"
	case errors.Is(err, ErrTruncated):
		return "truncated"
	}
	return "other:" + err.Error()
}

func collect(out *[]result) func(*shoereader.DeviceMessage, error) {
	return func(m *shoereader.DeviceMessage, err error) {
		if err != nil {
			*out = append(*out, result{what: errClass(err)})
			return
		}
		what := ""
		switch m.Kind {
		case shoereader.MsgHello:
			what = fmt.Sprintf("%+v refuse=%q", m.Info, m.Refuse)
		case shoereader.MsgCard, shoereader.MsgFaceUp:
			what = fmt.Sprintf("%v %d %s", m.Card, m.Confidence, m.Code)
		case shoereader.MsgShoeID, shoereader.MsgUnknownCard:
			what = string(m.ShoeID) + string(m.Code)
		case shoereader.MsgShoeOut:
			what = fmt.Sprint(m.Returned)
		case shoereader.MsgFault:
			what = fmt.Sprintf("%d %s", m.FaultCode, m.Text)
		}
		*out = append(*out, result{kind: m.Kind, seq: m.Seq, what: fmt.Sprintf("t%d %s", m.Time, what)})
	}
}

func decodeAll(in []byte, chunk int) []result {
	var out []result
	c := Protocol{}.NewCodec()
	fn := collect(&out)
	for len(in) > 0 {
		n := min(chunk, len(in))
		c.Feed(in[:n], fn)
		in = in[n:]
	}
	c.Flush(fn)
	return out
}

func TestCodec(t *testing.T) {
	good := Line(7, 1234, "CARD", "Ah", "100", "00114")
	bad := bytes.Replace(good, []byte("Ah"), []byte("Kh"), 1) // the checksum no longer holds
	malformed := Line(8, 1, "CARD", "Zz", "100")
	cases := []struct {
		name string
		in   []byte
		want []string
	}{
		{"hello", Line(1, 5, "HELLO", "42", "1", "VendorB", "LB-2", "SNB1", "2.0"),
			[]string{`1#1:t5 {Vendor:VendorB Model:LB-2 Serial:SNB1 Firmware:2.0 Proto:1 BootID:42} refuse=""`}},
		{"hello of another version is refused by the codec", Line(1, 5, "HELLO", "42", "2", "V", "M", "S", "F"),
			[]string{`1#1:t5 {Vendor:V Model:M Serial:S Firmware:F Proto:2 BootID:42} refuse="lineproto version 2, want 1"`}},
		{"card", good, []string{"3#7:t1234 Ah 100 00114"}},
		{"card with CRLF", bytes.Replace(good, []byte("\n"), []byte("\r\n"), 1), []string{"3#7:t1234 Ah 100 00114"}},
		{"every other type", bytes.Join([][]byte{
			Line(1, 0, "HB"), Line(2, 0, "CUT"), Line(3, 0, "SHOEIN"), Line(4, 0, "SHOEID", "S-0001"),
			Line(5, 0, "SHOEOUT", "12"), Line(6, 0, "MISREAD"), Line(7, 0, "DOUBLE"), Line(8, 0, "JAM"),
			Line(9, 0, "FACEUP", "Td"), Line(10, 0, "FACEUP"), Line(11, 0, "UNKNOWN", "99X"), Line(12, 0, "FAULT", "7", "motor_stalled"),
		}, nil), []string{"2#1:t0 ", "4#2:t0 ", "5#3:t0 ", "6#4:t0 S-0001", "7#5:t0 12", "8#6:t0 ", "9#7:t0 ",
			"10#8:t0 ", "11#9:t0 Td 0 ", "11#10:t0 ?? 0 ", "12#11:t0 99X", "13#12:t0 7 motor stalled"}},
		{"garbage, then a frame: resync at the line's end", append([]byte("\x00\xff@@ noise\n"), good...),
			[]string{"0#0:noise", "3#7:t1234 Ah 100 00114"}},
		{"bad checksum", append(bad, good...), []string{"0#0:checksum", "3#7:t1234 Ah 100 00114"}},
		{"malformed with a good checksum", malformed, []string{"0#0:malformed#8"}},
		{"unknown type", Line(9, 1, "BEEP"), []string{"0#0:malformed#9"}},
		{"host line echoed back", []byte("3 ACK 7*" + fmt.Sprintf("%02X", checksum([]byte("3 ACK 7"))) + "\n"), []string{"0#0:noise"}},
		{"overlong line", append(append(bytes.Repeat([]byte("x"), MaxLine+10), '\n'), good...),
			[]string{"0#0:too_long", "3#7:t1234 Ah 100 00114"}},
		{"cut short when the line goes idle", good[:10], []string{"0#0:truncated"}},
		{"blank lines are nothing", []byte("\n\r\n\n"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, chunk := range []int{1, 3, 4096} {
				var got []string
				for _, r := range decodeAll(c.in, chunk) {
					got = append(got, r.String())
				}
				assert.Equal(t, c.want, got, "fed %d bytes at a time", chunk)
			}
		})
	}
}

func TestAppendHost(t *testing.T) {
	c := Protocol{}.NewCodec()
	for _, m := range []struct {
		in   shoereader.HostMessage
		want Host
	}{
		{shoereader.HostMessage{Kind: shoereader.HostAck, Seq: 7}, Host{Seq: 1, Type: "ACK", Args: []uint64{7}}},
		{shoereader.HostMessage{Kind: shoereader.HostNak, Seq: 8}, Host{Seq: 1, Type: "NAK", Args: []uint64{8}}},
		{shoereader.HostMessage{Kind: shoereader.HostResend, Seq: 9}, Host{Seq: 1, Type: "RESEND", Args: []uint64{9}}},
		{shoereader.HostMessage{Kind: shoereader.HostConfig, Heartbeat: time.Second, Window: 8}, Host{Seq: 1, Type: "CONFIG", Args: []uint64{1000, 8}}},
	} {
		b, err := c.AppendHost(nil, 1, m.in)
		require.NoError(t, err)
		require.True(t, bytes.HasSuffix(b, []byte("\n")))
		h, err := ParseHost(bytes.TrimSuffix(b, []byte("\n")))
		require.NoError(t, err, "%q", b)
		assert.Equal(t, m.want, h)
	}
	_, err := c.AppendHost(nil, 1, shoereader.HostMessage{Kind: 99})
	require.Error(t, err)
}

// FuzzCodec: whatever the bytes, the codec never panics, holds at most
// MaxLine bytes, decodes the same however the bytes are split into reads,
// reports only known kinds, and decodes a good line that follows the
// bytes after a line end (it resynchronises).
func FuzzCodec(f *testing.F) {
	good := Line(3, 9, "CARD", "Qs", "100", "00412")
	f.Add(good, uint8(0))
	f.Add(Line(1, 5, "HELLO", "42", "1", "VendorB", "LB-2", "SNB1", "2.0"), uint8(3))
	f.Add([]byte("\x00\xff\x7e garbage *ZZ\n"), uint8(1))
	f.Add(bytes.Repeat([]byte("9"), MaxLine+3), uint8(7))
	f.Add(Line(8, 1, "CARD", "Zz", "100"), uint8(2))
	f.Add([]byte(strings.Repeat("1 1 HB*00\n", 4)), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		chunk := int(split%17) + 1
		var whole, parts []result
		c := Protocol{}.NewCodec()
		fn := collect(&whole)
		c.Feed(data, fn)
		require.LessOrEqual(t, c.Pending(), MaxLine+1)
		c.Flush(fn)
		parts = decodeAll(data, chunk)
		require.Equal(t, whole, parts, "the same bytes in reads of %d", chunk)
		for _, r := range whole {
			require.LessOrEqual(t, r.kind, shoereader.MsgFault)
		}

		var after []result
		c.Feed(data, collect(&after))
		after = after[:0]
		c.Feed(append([]byte("\n"), good...), collect(&after))
		require.NotEmpty(t, after)
		last := after[len(after)-1]
		require.Equal(t, result{kind: shoereader.MsgCard, seq: 3, what: "t9 " + card.MustParse("Qs").String() + " 100 00412"}, last,
			"a good line after any bytes is decoded: %v", after)
	})
}
