package measure

import (
	"fmt"
	"math"
	"strings"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/results"
)

// ShardJobs returns the job matrix of the shard plan p: one entry per shard, with its rows and cells.
func ShardJobs(p bench.ShardPlan) []ShardJob {
	var jobs []ShardJob
	for _, s := range p.Shards {
		var labels, ids []string
		for _, r := range s.Rows {
			labels = append(labels, results.ContextLabel(r))
		}
		for _, id := range s.Cells {
			ids = append(ids, id.String())
		}
		jobs = append(jobs, ShardJob{Shard: s.String(), Index: s.Index, Plan: s.Plan, Contexts: strings.Join(labels, ","),
			Cells: strings.Join(ids, ","), ExpectedMinutes: roundMinutes(s.Expected.Minutes())})
	}
	return jobs
}

// roundMinutes rounds to a tenth of a minute.
func roundMinutes(m float64) float64 { return math.Round(m*10) / 10 }

// planShards splits the matrix of the run options o into n shards (bench.PlanShards); errors
// are settings errors. It depends on o as the user gave it, before the simulator shortens the
// window, so that plan and every run --shard of the same settings agree.
func planShards(o session, n int) (bench.ShardPlan, error) {
	if n > 1 && o.SpecDecode.Pinned() && o.SpecDecode.AcceptanceLength == 0 {
		// Each shard would pin the mean its own acceptance pass measured: lengths that differ by
		// noise, which merge refuses after every runner spent its time.
		return bench.ShardPlan{}, settingsf("spec_decode: pinned with --shards %d needs spec_decode.acceptance_length: each shard would pin the length its own acceptance pass measured, and shards pinned at different lengths do not merge; take the length one unsharded pinned run measured (its results' spec_decode.pinned_acceptance_length) and set it", n)
	}
	cfg, err := benchConfig(o, "", "")
	if err != nil {
		return bench.ShardPlan{}, err
	}
	p, err := bench.PlanShards(cfg, n)
	if err != nil {
		return p, settingsf("--shards %d: %v", n, strings.TrimPrefix(err.Error(), fmt.Sprintf("%d shards: ", n)))
	}
	return p, nil
}

// ShardJob is one job of the decide mode's matrix output: one shard of the plan, as
// `speedmatrix plan --shards N` prints it.
type ShardJob struct {
	Shard string `json:"shard"` // K/N, the measure job's shard input
	// Index is K alone, for names that may hold no slash (an artifact's: upload-artifact v4
	// refuses "/"; strategy.job-index is not known to every runner, act's among them).
	Index           int     `json:"index"`
	Plan            string  `json:"plan"` // the plan's id, its plan input
	Contexts        string  `json:"contexts"`
	Cells           string  `json:"cells"`
	ExpectedMinutes float64 `json:"expected_minutes"`
}
