// Package memnet is an in-memory network: listeners and connections (net.Pipe) inside one
// process, for tests that run a server and its client under testing/synctest, whose fake clock
// advances only while every goroutine waits on something of the test's own (a real socket is
// not such a wait). Figures measured over it hold the model's time, whatever the machine's
// load. It must not be used to reach anything outside the process.
//
//	n := memnet.New()
//	ln, _ := n.Listen("tcp", "127.0.0.1:0")        // serve on ln
//	tr := &http.Transport{DialContext: n.DialContext} // dial its Addr
package memnet
