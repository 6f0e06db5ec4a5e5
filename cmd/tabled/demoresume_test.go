//go:build !production

package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"

	"github.com/livetable/livetable/table"
)

// scriptedTable is a table for the demo supervisor: one state per look
// (Snapshot), in turn, and the verdicts on its resumes, in turn (nil once
// they are used up); it notes at which look each resume came.
type scriptedTable struct {
	states  []table.State
	errs    []error
	look    int
	resumes []int
}

func (s *scriptedTable) Snapshot() table.State {
	st := s.states[min(s.look, len(s.states)-1)]
	s.look++
	return st
}

func (s *scriptedTable) Submit(_ context.Context, in table.Input) error {
	if c, ok := in.(table.Supervisor); !ok || c.Command != "resume" {
		return fmt.Errorf("not a resume: %+v", in)
	}
	s.resumes = append(s.resumes, s.look)
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

// The demo supervisor resumes a table paused at start for any reason,
// and later only one its shoe's silence paused; a resume refused because
// the shoe is not heard yet is tried again at the next event, one refused
// otherwise not for the same pause.
func TestDemoSupervise(t *testing.T) {
	playing := table.State{}
	paused := func(why table.PauseReason, alarms ...table.Alarm) table.State {
		return table.State{Paused: true, PauseReason: string(why) + " ...", PauseReasons: []table.PauseReason{why}, Alarms: alarms}
	}
	silent := table.Alarm{Code: "shoe.silent", Pauses: true}
	alive := table.Alarm{Code: "shoe.alive"}
	silentPause := paused(table.PauseDevice, silent, alive)
	down := fmt.Errorf("refused: %w", table.ErrShoeDown)
	other := errors.New("table: a misread waits")
	tests := []struct {
		name   string
		states []table.State
		errs   []error
		want   []int // the looks (from 1) the resumes came at
	}{
		{"a table playing is left alone", []table.State{playing, playing}, nil, nil},
		{"a restart's pause is resumed", []table.State{paused(table.PauseRestart), playing}, nil, []int{1}},
		{"the shoe not heard yet at start: again at each event",
			[]table.State{paused(table.PauseRestart), paused(table.PauseRestart), paused(table.PauseRestart), playing},
			[]error{down, down}, []int{1, 2, 3}},
		{"a later silent shoe is resumed once heard",
			[]table.State{playing, silentPause, silentPause, playing}, []error{down}, []int{2, 3}},
		{"a later pause of another reason is left to a person",
			[]table.State{playing, paused(table.PauseSupervisor), paused(table.PauseMisread), paused(table.PauseDevice, table.Alarm{Code: "shuffler.fault", Pauses: true})},
			nil, nil},
		{"a silent shoe and a misread at once are left to a person",
			[]table.State{playing, {Paused: true, PauseReason: "two", PauseReasons: []table.PauseReason{table.PauseDevice, table.PauseMisread}, Alarms: []table.Alarm{silent}}},
			nil, nil},
		{"refused otherwise: not again for the same pause",
			[]table.State{playing, silentPause, silentPause, silentPause}, []error{other}, []int{2}},
		{"refused at start otherwise: a later silent shoe is still resumed",
			[]table.State{paused(table.PauseRestart), paused(table.PauseRestart), playing, silentPause}, []error{other}, []int{1, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scriptedTable{states: tt.states, errs: tt.errs}
			// An event after each look but the last; then the
			// subscription ends and so does the supervisor.
			events := make(chan table.Event, len(tt.states))
			for range len(tt.states) - 1 {
				events <- table.Event{Body: alive}
			}
			close(events)
			demoSupervise(context.Background(), s, events, zerolog.Nop())
			assert.Equal(t, len(tt.states), s.look, "one look per event")
			assert.Equal(t, tt.want, s.resumes)
		})
	}
	t.Run("ctx ends the wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s := &scriptedTable{states: []table.State{paused(table.PauseRestart)}, errs: []error{down}}
		demoSupervise(ctx, s, make(chan table.Event), zerolog.Nop())
		assert.Equal(t, []int{1}, s.resumes)
	})
}
