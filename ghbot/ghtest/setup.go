package ghtest

// The wire format of the ghfake command (ghbot/ghtest/ghfake), which serves this fake as a
// process, shared with the programs that drive it (the real-runner test).

// Setup is what POST /_setup (and -setup) of the ghfake command adds to its fake, applied in the order of its fields.
type Setup struct {
	Repos       []Repo              `json:"repos"`
	Tokens      map[string]string   `json:"tokens"` // token → login
	Permissions []SetupPermission   `json:"permissions"`
	Commits     []SetupCommit       `json:"commits"` // parents first
	Refs        map[string]SetupRef `json:"refs"`    // "owner/name heads/main" → sha
	Pulls       []Pull              `json:"pulls"`   // added or replaced
	Comments    []Comment           `json:"comments"`
}

// SetupPermission is a user's permission on a repository (admin, write, read, none).
type SetupPermission struct {
	Repo  string `json:"repo"`
	User  string `json:"user"`
	Level string `json:"level"`
}

// SetupCommit is a commit of a repository's graph (its files are not needed by the bot).
type SetupCommit struct {
	Repo string `json:"repo"`
	GitCommit
}

// SetupRef is where a ref points.
type SetupRef struct {
	SHA string `json:"sha"`
}

// Dump is what GET /_state of the ghfake command answers.
type Dump struct {
	State State `json:"state"`
	// Files holds, per repository, the files of the ref asked for with ?ref= (absent when the ref
	// does not exist).
	Files map[string]map[string]string `json:"files,omitempty"`
	// Refs holds, per repository, where the ref asked for points.
	Refs map[string]string `json:"refs,omitempty"`
}
