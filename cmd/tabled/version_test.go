package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionFlag(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 0, run([]string{"--version"}, &out, &errb))
	assert.Regexp(t, `^tabled \S+ \(commit \S+, built \S+, go\S+\)\n$`, out.String())
}
