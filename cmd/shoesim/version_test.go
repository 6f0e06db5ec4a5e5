package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"--version"}, &out, &errb))
	assert.Regexp(t, `^shoesim \S+ \(commit \S+, built \S+, go\S+\)\n$`, out.String())
}
