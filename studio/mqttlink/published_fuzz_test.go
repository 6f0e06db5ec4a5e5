package mqttlink

import (
	"encoding/json"
	"testing"
)

// FuzzStateSeq feeds arbitrary payloads to stateSeq, the reading of the
// table's retained state off the broker at start (BrokerPublishedSeq):
// anyone the broker lets publish there chooses those bytes. It must never
// panic; a payload it reads as a state must be a JSON state envelope
// naming that seq, and an empty one (cleared by hand) is no state, not an
// error.
func FuzzStateSeq(f *testing.F) {
	f.Add([]byte(`{"kind":"state","seq":41,"data":{"seq":41,"phase":"play"}}`))
	f.Add([]byte(`{"kind":"state","data":{"seq":18446744073709551615}}`))
	f.Add([]byte(`{"kind":"event","data":{"seq":7}}`))
	f.Add([]byte(`{"kind":"state","data":{"seq":-1}}`))
	f.Add([]byte(`{"kind":"state","data":[]}`))
	f.Add([]byte(``))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		seq, found, err := stateSeq(payload)
		switch {
		case len(payload) == 0:
			if found || err != nil {
				t.Fatalf("empty payload: found %v, err %v", found, err)
			}
		case err != nil:
			if found || seq != 0 {
				t.Fatalf("error %v with found %v seq %d", err, found, seq)
			}
		case !found:
			t.Fatalf("a non-empty payload neither read nor refused: %q", payload)
		default:
			var env struct {
				Kind string `json:"kind"`
				Data struct {
					Seq uint64 `json:"seq"`
				} `json:"data"`
			}
			if json.Unmarshal(payload, &env) != nil || env.Kind != StateKind || env.Data.Seq != seq {
				t.Fatalf("read seq %d from %q, which is not a state naming it", seq, payload)
			}
		}
	})
}
