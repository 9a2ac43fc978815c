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
	type price struct {
		jobs []measure.ShardJob
		err  error
	}
	priced := func(minutes float64, err error) price {
		return price{[]measure.ShardJob{{Shard: "1/1", ExpectedMinutes: minutes}}, err}
	}
	for _, tc := range []struct {
		name    string
		budget  time.Duration
		plan    price
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
			pc := config.Default()
			pc.Paired.Blocks = 4
			j := &job{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			err := j.fitPairedBlocks(&pc, 0) // no budget: nothing priced, nothing changed
			if tc.budget > 0 {
				err = fitBlocks(j.log, &pc, tc.budget, tc.plan.jobs, tc.plan.err)
			}
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

// TestFitPairedBlocksPlans checks that a paired run within a budget is priced by the plan of its
// own settings (measure.Plan): the quick matrix's cells at a 1 s window fit 4 blocks a side in
// an hour, and in a minute not even 2.
func TestFitPairedBlocksPlans(t *testing.T) {
	j := &job{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	pc := config.Default()
	pc.Matrix, pc.Duration, pc.Paired.Blocks = "quick", time.Second, 4
	if err := j.fitPairedBlocks(&pc, time.Hour); err != nil || pc.Paired.Blocks != 4 {
		t.Errorf("an hour: blocks %d, err %v; want 4 and none", pc.Paired.Blocks, err)
	}
	if err := j.fitPairedBlocks(&pc, time.Minute); err == nil || !strings.Contains(err.Error(), "at least 2 blocks a side") {
		t.Errorf("a minute: err %v, want the refusal", err)
	}
}
