package action

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReleaseCommitted (issue 35, item 2): the release a user pins is committed: release/TAG
// names a version, CHANGELOG.md has its dated section under an (empty or not) Unreleased one,
// and release/SHA256SUMS names the Go that built it and a SHA-256 for each binary the action's
// download (release/binary.sh) looks for. Whether the sums match the tree is
// `release/make.sh --verify`'s to say (it builds; the release workflow runs it).
func TestReleaseCommitted(t *testing.T) {
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile("../../" + p)
		if err != nil {
			t.Fatalf("%s: %v (run release/make.sh vX.Y.Z and commit its output)", p, err)
		}
		return string(b)
	}
	tag := strings.TrimSpace(read("release/TAG"))
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(tag) {
		t.Fatalf("release/TAG %q is no version vX.Y.Z", tag)
	}
	changelog := read("CHANGELOG.md")
	section := regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(tag) + ` — \d{4}-\d{2}-\d{2}$`).FindStringIndex(changelog)
	unreleased := strings.Index(changelog, "\n## Unreleased\n")
	if section == nil || unreleased < 0 || unreleased > section[0] {
		t.Errorf("CHANGELOG.md: want \"## Unreleased\" and then \"## %s — <date>\"", tag)
	}
	sums := strings.Split(strings.TrimSpace(read("release/SHA256SUMS")), "\n")
	if len(sums) == 0 || !regexp.MustCompile(`^# go\d+\.\d+(\.\d+)?$`).MatchString(sums[0]) {
		t.Fatalf("release/SHA256SUMS: the first line names the Go that built the binaries (# go1.x.y), got %q", sums[0])
	}
	// The second line names the source the binaries were built from (release/sourcehash.sh):
	// release/binary.sh uses them only for that source.
	if len(sums) < 2 || !regexp.MustCompile(`^# source [0-9a-f]{64}$`).MatchString(sums[1]) {
		t.Fatalf("release/SHA256SUMS: the second line names the source the binaries were made from (# source HASH, release/sourcehash.sh), got %q", sums[min(1, len(sums)-1)])
	}
	line := regexp.MustCompile(`^([0-9a-f]{64})  (speedmatrix_linux_(amd64|arm64))$`)
	found := map[string]bool{}
	for _, l := range sums[2:] {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("release/SHA256SUMS: %q is no \"<sha256>  speedmatrix_linux_<arch>\" line", l)
			continue
		}
		found[m[2]] = true
	}
	for _, name := range []string{"speedmatrix_linux_amd64", "speedmatrix_linux_arm64"} {
		if !found[name] {
			t.Errorf("release/SHA256SUMS names no %s, which release/binary.sh downloads", name)
		}
	}
}
