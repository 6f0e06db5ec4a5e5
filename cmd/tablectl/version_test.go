package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 0, run([]string{"--version"}, strings.NewReader(""), &out, &errb))
	assert.Regexp(t, `^tablectl \S+ \(commit \S+, built \S+, go\S+\)\n$`, out.String())
}
