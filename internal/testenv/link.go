package testenv

import (
	"errors"
	"net"
	"sync"
)

// Link is a loopback TCP proxy in front of a server, such as a target cluster's
// kube-apiserver, that a test can switch to hold connections: the network fault where
// a peer neither answers nor refuses (a black hole, a firewall that drops), which a
// stopped server does not give (it refuses at once). TLS passes through it unchanged:
// a kubeconfig whose server is the Link's URL verifies the backend's certificate as
// before (certificates name 127.0.0.1, not a port).
type Link struct {
	l       net.Listener
	backend string

	mu       sync.Mutex
	hanging  bool
	changed  chan struct{}         // closed and replaced at each mode change
	open     map[net.Conn]net.Conn // each client connection and its backend one (nil while held)
	accepted int
	closed   bool
	conns    sync.WaitGroup
}

// NewLink listens on a free loopback port and forwards each connection to backend
// (host:port). Close it when done.
func NewLink(backend string) (*Link, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	k := &Link{l: l, backend: backend, changed: make(chan struct{}), open: map[net.Conn]net.Conn{}}
	go k.serve()
	return k, nil
}

// Addr is the Link's host:port.
func (k *Link) Addr() string { return k.l.Addr().String() }

// URL is the Link as the server of a kubeconfig: https://<Addr>.
func (k *Link) URL() string { return "https://" + k.Addr() }

// Hang makes the Link hold every connection: a new one is accepted and never gets a
// byte through, an open one stops forwarding either way (what it read is dropped).
// Clients see neither an answer nor an error until their own timeouts.
func (k *Link) Hang() { k.set(true) }

// Pass makes the Link forward again; the connections it held are reset, so that their
// clients dial anew, as after a network comes back and TCP gives up on the old ones.
func (k *Link) Pass() { k.set(false) }

// Hanging reports whether the Link holds connections.
func (k *Link) Hanging() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hanging
}

// Open is the number of client connections open through the Link now, held ones
// included; Accepted counts every connection it accepted.
func (k *Link) Open() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.open)
}

// Accepted counts the connections the Link has accepted.
func (k *Link) Accepted() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.accepted
}

// Close stops listening, resets every connection and waits for their goroutines.
func (k *Link) Close() error {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	err := k.l.Close()
	k.set(false)
	k.mu.Lock()
	for c, b := range k.open {
		reset(c)
		if b != nil {
			reset(b)
		}
	}
	k.mu.Unlock()
	k.conns.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

func (k *Link) set(hang bool) {
	k.mu.Lock()
	if k.hanging == hang {
		k.mu.Unlock()
		return
	}
	k.hanging = hang
	close(k.changed)
	k.changed = make(chan struct{})
	k.mu.Unlock()
}

func (k *Link) state() (hanging bool, changed <-chan struct{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hanging, k.changed
}

// track registers the client connection c and its backend b (nil while held); false
// when the Link is closed.
func (k *Link) track(c, b net.Conn) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return false
	}
	k.open[c] = b
	return true
}

// forget drops the client connection c.
func (k *Link) forget(c net.Conn) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.open, c)
}

func (k *Link) serve() {
	for {
		c, err := k.l.Accept()
		if err != nil {
			return
		}
		k.mu.Lock()
		k.accepted++
		k.mu.Unlock()
		k.conns.Add(1)
		go func() {
			defer k.conns.Done()
			k.handle(c)
		}()
	}
}

func (k *Link) handle(c net.Conn) {
	if hanging, changed := k.state(); hanging {
		// Held: counted as open, never dialled through, reset once the mode changes.
		if !k.track(c, nil) {
			reset(c)
			return
		}
		<-changed
		k.forget(c)
		reset(c)
		return
	}
	b, err := net.Dial("tcp", k.backend)
	if err != nil {
		reset(c)
		return
	}
	if !k.track(c, b) {
		reset(c)
		reset(b)
		return
	}
	defer k.forget(c)
	done := make(chan struct{}, 2)
	go func() { k.pipe(b, c); done <- struct{}{} }()
	go func() { k.pipe(c, b); done <- struct{}{} }()
	<-done
	reset(c)
	reset(b)
	<-done
}

// pipe copies src to dst while the Link passes. Once it hangs, what src sends is
// dropped until the mode changes; then both ends are reset.
func (k *Link) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if hanging, changed := k.state(); hanging {
				<-changed
				reset(src)
				reset(dst)
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// reset closes c with SO_LINGER 0: the peer gets a RST, not a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
