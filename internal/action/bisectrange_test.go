package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// mainLines is a commit graph of first-parent lines: each ref or commit names its line, tip
// first.
type mainLines map[string][]string

func (l mainLines) MergeBase(context.Context, string, string) (string, error) {
	return "", fmt.Errorf("no merge base in this test")
}

func (l mainLines) Ancestors(_ context.Context, from string, limit int) ([]string, error) {
	if line, ok := l[from]; ok {
		return line[:min(limit, len(line))], nil
	}
	for _, line := range l {
		if k := slices.Index(line, from); k >= 0 {
			return line[k:min(k+limit, len(line))], nil
		}
	}
	return nil, fmt.Errorf("unknown commit %s", from)
}

// TestFirstParentsBetween: a bisection's range lies on the default branch's first-parent line,
// both ends included, whatever named it (issue 34.6): a bad or good commit of a pull request's
// branch, merged or not, is refused in every mode, since each goes through this one function.
func TestFirstParentsBetween(t *testing.T) {
	main := []string{"m5", "m4", "m3", "m2", "m1", "m0"} // m4 merged the branch b2 → b1 → m1
	g := mainLines{"main": main, "b2": {"b2", "b1", "m1", "m0"}}
	for _, tc := range []struct {
		name, good, bad string
		want            []string
		err             string
	}{
		{name: "on main", good: "m1", bad: "m4", want: []string{"m2", "m3", "m4"}},
		{name: "adjacent", good: "m3", bad: "m4", want: []string{"m4"}},
		{name: "bad off main", good: "m1", bad: "b2", err: "the first bad commit b2 is not among"},
		{name: "good off main", good: "b1", bad: "m4", err: "the last good commit b1 is not among"},
		{name: "reversed", good: "m4", bad: "m1", err: "is not before"},
		{name: "same", good: "m3", bad: "m3", err: "is not before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := firstParentsBetween(context.Background(), g, "main", tc.good, tc.bad)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%v, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("%v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
