package config

import (
	"testing"
	"time"
)

// TestBudget checks the budget key: a GPU wall-time budget for the whole job (0: none), never
// negative.
func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		want    time.Duration
		wantErr string
	}{
		{doc: "", want: 0},
		{doc: "budget: 45m\n", want: 45 * time.Minute},
		{doc: "budget: 1h30m\n", want: 90 * time.Minute},
		{doc: "budget: -5m\n", wantErr: "speedmatrix.yaml:1:9: budget: -5m0s: want 0 (no budget) or a positive duration like 45m"},
	} {
		c := Default()
		err := Parse("speedmatrix.yaml", []byte(tc.doc), &c)
		if err == nil {
			err = c.Validate()
		}
		switch {
		case tc.wantErr != "":
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%q: error %v, want %s", tc.doc, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.doc, err)
		case c.Budget != tc.want:
			t.Errorf("%q: budget %v, want %v", tc.doc, c.Budget, tc.want)
		}
	}
}
