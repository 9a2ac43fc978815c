// Package demo runs the main job end to end on the built-in simulator, as `speedmatrix demo`
// shows it: the base measured several times and stored as default-branch commits (the newest the
// baseline, all of them its history), a head measured with a slowdown injected on purpose, the
// comparison with the stored baseline as the bot makes it, and the PR comment and the check the
// bot would post, written into a folder; then the terminal's summary of it.
//
// # Method
//
// Run measures each run on a simulator of its own (measure.Run, Parallel at a time), lowers the
// simulator's speed on a machine too busy for it (bench.ErrHostStarved) when the speed was not
// asked for, stores the base's runs in a local store and reads the baseline and the history back
// as the bot does (store.History); Render compares and renders, with no I/O, so that the
// checked-in example (docs/example) can be rendered again from its files; Summary writes the
// story for a terminal.
//
// It must not parse flags or decide an exit status: the command line does both.
package demo
