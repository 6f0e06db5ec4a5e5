package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResolve(t *testing.T) {
	stamped := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-24T09:00:00Z"}}}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name    string
		v, c, d string
		read    func() (*debug.BuildInfo, bool)
		want    Info
	}{
		{"linker flags win", "1.2.0", "def456", "2026-11-24T10:00:00Z", stamped,
			Info{Version: "1.2.0", Commit: "def456", Date: "2026-11-24T10:00:00Z"}},
		{"VCS stamp", "", "", "", stamped, Info{Version: "dev", Commit: "abc123", Date: "2026-11-24T09:00:00Z"}},
		{"nothing", "", "", "", none, Info{Version: "dev", Commit: "unknown", Date: "unknown"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := resolve(tc.v, tc.c, tc.d, tc.read)
			got.Go = ""
			assert.Equal(t, tc.want, got)
		})
	}
	assert.Contains(t, String("tabled"), "tabled ")
}
