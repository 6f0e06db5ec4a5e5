package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
)

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"--version"}, &out, &errb, zerolog.Nop()))
	assert.Regexp(t, `^bjsim \S+ \(commit \S+, built \S+, go\S+\)\n$`, out.String())
}
