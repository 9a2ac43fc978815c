package calibrate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/speedmatrix/speedmatrix/compare"
)

func TestParseDecodeRatePrior(t *testing.T) {
	tests := []struct {
		in      string
		want    []compare.ConcurrencyCV
		wantErr bool
	}{
		{in: "1=20,2=24,4=9,*=1", want: []compare.ConcurrencyCV{{UpTo: 1, CV: 0.20}, {UpTo: 2, CV: 0.24}, {UpTo: 4, CV: 0.09}, {CV: 0.01}}},
		{in: "*=5%", want: []compare.ConcurrencyCV{{CV: 0.05}}},
		{in: " 2 = 10 , * = 1 ", want: []compare.ConcurrencyCV{{UpTo: 2, CV: 0.10}, {CV: 0.01}}},
		{in: "1=20,2=24", wantErr: true},
		{in: "*=1,4=9", wantErr: true},
		{in: "2=10,1=20,*=1", wantErr: true},
		{in: "1=0,*=1", wantErr: true},
		{in: "1=x,*=1", wantErr: true},
		{in: "1,*=1", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseDecodeRatePrior(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.in, diff)
		}
	}
}
