package cmdutil

import "runtime/debug"

// releaseVersion is the version release/make.sh stamps into a release binary (-ldflags -X),
// which it builds without VCS information so that the binary is reproducible; "" otherwise.
var releaseVersion string

// Version returns the module version of this build, with the VCS revision when the build has
// one (e.g. "v0.1.0", or "(devel) 3b518982806c+dirty"); a release binary's is its tag.
func Version() string {
	if releaseVersion != "" {
		return releaseVersion
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" && (v == "(devel)" || v == "") {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return v + " " + rev + dirty
	}
	return v
}
