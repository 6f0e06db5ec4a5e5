package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
)

func TestRunDispatch(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"no subcommand", nil, 2, "", "usage: bjsim"},
		{"unknown subcommand", []string{"poker"}, 2, "", `unknown subcommand "poker"`},
		{"help", []string{"help"}, 0, "sidebets", ""},
		{"subcommand help", []string{"sidebets", "-h"}, 0, "", "--game"},
		{"rtp help", []string{"rtp", "-h"}, 0, "", "-rounds"}, // exited 2 with "usage: flag: help requested"
		{"exact help", []string{"exact", "-h"}, 0, "", "-report"},
		{"rtp bad flag", []string{"rtp", "--nope"}, 2, "", "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errOut, zerolog.Nop())
			assert.Equal(t, tt.wantCode, code)
			assert.Contains(t, out.String(), tt.wantStdout)
			assert.Contains(t, errOut.String(), tt.wantStderr)
		})
	}
}
