package action

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/measure"
)

// TestFitPairedBlocks checks that a paired run in a job with a budget gets the blocks a side the
// budget affords (2 × blocks × the cells' expected time), is refused below 2 blocks a side with
// what it would cost, and is left alone without a budget or a price.
func TestFitPairedBlocks(t *testing.T) {
	priced := func(minutes float64, err error) func(config.Config, int) ([]measure.ShardJob, error) {
		return func(_ config.Config, n int) ([]measure.ShardJob, error) {
			if n != 1 {
				t.Errorf("priced with %d shards, want 1 (the whole run)", n)
			}
			return []measure.ShardJob{{Shard: "1/1", ExpectedMinutes: minutes}}, err
		}
	}
	for _, tc := range []struct {
		name    string
		budget  time.Duration
		plan    func(config.Config, int) ([]measure.ShardJob, error)
		want    int    // blocks a side after
		wantErr string // "" for none
	}{
		{"no budget", 0, priced(40, nil), 4, ""},
		{"the budget affords all", 6 * time.Hour, priced(40, nil), 4, ""},
		{"the budget affords 3", 4 * time.Hour, priced(40, nil), 3, ""},
		{"the budget affords 2", 160 * time.Minute, priced(40, nil), 2, ""},
		{"the budget affords 1", 75 * time.Minute, priced(40, nil), 4, "about 2h40m0s of GPU time (4 × 40m0s for the cells, model loads not counted), more than the budget 1h15m0s"},
		{"no price", time.Hour, priced(0, errors.New("no plan")), 4, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &job{d: Deps{PlanShards: tc.plan}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			pc := config.Default()
			pc.Paired.Blocks = 4
			err := j.fitPairedBlocks(&pc, tc.budget)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err %v, want one saying %q", err, tc.wantErr)
			case pc.Paired.Blocks != tc.want:
				t.Errorf("blocks %d, want %d", pc.Paired.Blocks, tc.want)
			}
		})
	}
}
