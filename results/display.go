package results

import "strings"

// Display names shared by the report renderer and the importer, as the reference report prints
// them.
var (
	statusNames = []struct {
		s    Status
		name string
	}{
		{StatusValid, "Valid"},
		{StatusQueued, "Requests queued"},
		{StatusOverCapacity, "Over capacity"},
		{StatusError, "Error"},
		{StatusSkipped, "Skipped"},
	}
	modeNames = []struct{ code, name string }{
		{DecodeFixedDuration, "Fixed duration"},
		{PrefillDecodeWarmup, "Measured during decode warm-up"},
	}
)

// StatusDisplay returns the status as a report prints it ("Requests queued").
func StatusDisplay(s Status) string {
	for _, n := range statusNames {
		if n.s == s {
			return n.name
		}
	}
	return string(s)
}

// ParseStatusDisplay reads a status as a report prints it; ok is false for an unknown one.
func ParseStatusDisplay(name string) (Status, bool) {
	for _, n := range statusNames {
		if strings.EqualFold(n.name, strings.TrimSpace(name)) {
			return n.s, true
		}
	}
	return "", false
}

// ModeDisplay returns a decode test mode or prefill mode as a report prints it; a mode this
// version does not know is returned as it is.
func ModeDisplay(code string) string {
	for _, m := range modeNames {
		if m.code == code {
			return m.name
		}
	}
	return code
}

// ParseModeDisplay maps a printed mode back to its code; unknown text is kept verbatim.
func ParseModeDisplay(name string) string {
	for _, m := range modeNames {
		if strings.EqualFold(m.name, strings.TrimSpace(name)) {
			return m.code
		}
	}
	return strings.TrimSpace(name)
}
