package report_test

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/report"
)

// The comment's per-check marker is the one ghbot looks for when it edits the comment in place.
func TestCheckMarkerIsGhbots(t *testing.T) {
	for _, name := range []string{"speedmatrix", "perf / h200", "a -->b", "<x>&y"} {
		if got, want := report.CheckMarker(name), ghbot.Marker(name); got != want {
			t.Errorf("CheckMarker(%q) = %q, ghbot.Marker = %q", name, got, want)
		}
	}
}
