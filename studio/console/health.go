package console

import (
	"encoding/json"
	"net/http"
	"time"
)

// The names of the checks a table reports (issue 8: shoe link, GPIO,
// broker, journal, clock). A HealthFunc may add others.
const (
	CheckShoe    = "shoe"
	CheckGPIO    = "gpio"
	CheckBroker  = "broker"
	CheckJournal = "journal"
	CheckClock   = "clock"
	// CheckShuffler is the dual-shoe shuffler, on a table that runs one:
	// failing exactly while it is latched in its fault, which only a
	// supervisor's reset clears. The supervisor view offers the reset
	// while it fails.
	CheckShuffler = "shuffler"
)

// Check is one part of the table and whether it works.
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Detail says what is wrong, or what is right ("SIM-1 SIM0001").
	Detail string `json:"detail,omitempty"`
	// Since is when the check last changed state, zero when unknown.
	Since time.Time `json:"since,omitzero"`
}

// Health is the table's health: every check. It is healthy when every
// check is OK (no checks at all is healthy: nothing is known to be wrong).
type Health struct {
	Checks []Check `json:"checks"`
}

// OK reports whether every check passes.
func (h Health) OK() bool {
	for _, c := range h.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// MarshalJSON adds the overall verdict: {"ok":true,"checks":[...]}.
func (h Health) MarshalJSON() ([]byte, error) {
	checks := h.Checks
	if checks == nil {
		checks = []Check{}
	}
	return json.Marshal(struct {
		OK     bool    `json:"ok"`
		Checks []Check `json:"checks"`
	}{h.OK(), checks})
}

// handleHealthz serves the health for monitoring: 200 when healthy, 503
// otherwise, the JSON body either way.
func (s *Server) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	h := s.health()
	code := http.StatusOK
	if !h.OK() {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, h)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	// The status is out; an encoding failure here can only be a client gone.
	_ = json.NewEncoder(w).Encode(v)
}
