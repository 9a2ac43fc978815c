package memnet

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
)

// TestDialReachesListener: a dialed connection is accepted at the listener's address and
// carries bytes both ways; ports are handed out from 1; an address nothing listens on, or
// whose listener closed, refuses the dial; a taken address refuses a second listener.
func TestDialReachesListener(t *testing.T) {
	n := New()
	ln, err := n.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if got := ln.Addr().String(); got != "127.0.0.1:1" {
		t.Errorf("first free port: %s, want 127.0.0.1:1", got)
	}
	if _, err := n.Listen("tcp", ln.Addr().String()); err == nil {
		t.Error("a second listener on a taken address: no error")
	}
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil {
			done <- err
			return
		}
		_, err = c.Write(append(b, '!'))
		done <- err
	}()
	c, err := n.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "ping!" {
		t.Errorf("read %q, %v; want the server's \"ping!\"", b, err)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := n.DialContext(context.Background(), "tcp", "127.0.0.1:9"); err == nil {
		t.Error("dial to an address nothing listens on: no error")
	}
	ln.Close()
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
	if _, err := n.DialContext(context.Background(), "tcp", ln.Addr().String()); err == nil {
		t.Error("dial to a closed listener: no error")
	}
}
