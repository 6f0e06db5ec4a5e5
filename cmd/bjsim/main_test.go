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
		// Values that ran 20 million rounds (--rounds -1), until 400 million
		// (--ci -1), printed a return of 0% (--max-rounds -1) or were ignored.
		{"rtp negative rounds", []string{"rtp", "--rounds", "-1"}, 2, "", "--rounds -1: 0 (until --ci) or more"},
		{"rtp no interval", []string{"rtp", "--ci", "-1"}, 2, "", "--ci -1: a half-width above 0"},
		{"rtp no max", []string{"rtp", "--max-rounds", "-1"}, 2, "", "--max-rounds -1: at least 1"},
		{"rtp no workers", []string{"rtp", "--workers", "0", "--rounds", "10"}, 2, "", "--workers 0: at least 1"},
		{"rtp max is a bound", []string{"rtp", "--max-rounds", "1000", "--ci", "0.0001"}, 0, "000           1000 ", ""},
		{"exact negative rounds", []string{"exact", "--rounds", "-5"}, 2, "", "--rounds -5"},
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
