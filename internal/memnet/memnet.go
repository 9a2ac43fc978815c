package memnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Network holds the listeners of one in-memory network. The zero value is not usable: call New.
type Network struct {
	mu        sync.Mutex
	listeners map[string]*listener
	next      int
}

// New returns an empty network.
func New() *Network { return &Network{listeners: map[string]*listener{}} }

// Listen returns a listener at address; port 0 picks a free one (from 1, in order).
func (n *Network) Listen(network, address string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("memnet: listen %s: %w", address, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if port == "0" {
		n.next++
		port = fmt.Sprint(n.next)
	}
	addr := addr{network: network, s: net.JoinHostPort(host, port)}
	if _, ok := n.listeners[addr.s]; ok {
		return nil, fmt.Errorf("memnet: listen %s: address already in use", addr.s)
	}
	l := &listener{n: n, addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
	n.listeners[addr.s] = l
	return l, nil
}

// DialContext connects to the listener at address, as net.Dialer.DialContext.
func (n *Network) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	n.mu.Lock()
	l, ok := n.listeners[address]
	n.mu.Unlock()
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("memnet: nothing listens on %s: %w", address, errConnRefused)}
	}
	client, server := net.Pipe()
	select {
	case l.conns <- conn{Conn: server, local: l.addr, remote: addr{network: network, s: "client"}}:
		return conn{Conn: client, local: addr{network: network, s: "client"}, remote: l.addr}, nil
	case <-l.done:
		client.Close()
		server.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("memnet: %s closed: %w", address, errConnRefused)}
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

var errConnRefused = errors.New("connection refused")

// listener is one address's listener.
type listener struct {
	n         *Network
	addr      addr
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

// Accept waits for the next connection.
func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting and frees the address.
func (l *listener) Close() error {
	l.closeOnce.Do(func() {
		close(l.done)
		l.n.mu.Lock()
		delete(l.n.listeners, l.addr.s)
		l.n.mu.Unlock()
	})
	return nil
}

// Addr returns the listener's address.
func (l *listener) Addr() net.Addr { return l.addr }

// conn is one end of a pipe with the addresses of a network connection.
type conn struct {
	net.Conn
	local, remote addr
}

func (c conn) LocalAddr() net.Addr  { return c.local }
func (c conn) RemoteAddr() net.Addr { return c.remote }

// addr is an in-memory address.
type addr struct{ network, s string }

func (a addr) Network() string { return a.network }
func (a addr) String() string  { return a.s }
