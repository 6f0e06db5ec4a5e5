package consoletest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

func TestCheckSupervisor(t *testing.T) {
	for _, tc := range []struct {
		in table.Input
		ok bool
	}{
		{table.Supervisor{Command: "pause", By: "anna", Reason: "camera"}, true},
		{table.Supervisor{Command: "correct", By: "anna", Card: card.MustParse("Qh")}, true},
		{table.Supervisor{Command: "resume", By: "anna"}, true},
		{table.Supervisor{Command: "void", By: "anna"}, false},
		{table.Supervisor{Command: "void", By: "anna", Reason: "misdeal", Round: "#20:15:33"}, true},
		{table.Supervisor{Command: "correct", By: "anna", Card: card.MustParse("Qh"), Round: "#20:15:33"}, true},
		{table.Supervisor{Command: "pause", By: "anna", Reason: "camera", Round: "#20:15:33"}, false},
		{table.Supervisor{Command: "resume", By: "anna", Round: "#20:15:33"}, false},
		{table.Supervisor{Command: "correct", By: "anna"}, false},
		{table.Supervisor{Command: "shutdown", By: "anna"}, false},
		{table.Decision{Seat: 1, Action: "hit"}, false},
	} {
		err := CheckSupervisor(tc.in)
		assert.Equal(t, tc.ok, err == nil, "%+v: %v", tc.in, err)
	}
}
