package chaos

import (
	"net"
	"sync"
	"time"
)

// proxyMode is what the proxy does to connections for now.
type proxyMode int

const (
	proxyPass proxyMode = iota
	// proxyStall accepts and holds connections without a byte either way, until the
	// mode changes; then it resets them.
	proxyStall
	// proxyReset resets every new connection at once (RST, no FIN).
	proxyReset
	// proxySlow forwards 2 KiB every 100 ms each way.
	proxySlow
)

func (m proxyMode) String() string {
	return [...]string{"pass", "stall", "reset", "slow"}[m]
}

// proxy is a loopback TCP proxy in front of the chart repository or of the remote
// cluster's kube-apiserver; its mode decides what happens to connections, new and
// open ones alike (a client of kube-apiserver keeps one HTTP/2 connection for long).
type proxy struct {
	l       net.Listener
	backend string
	log     *eventLog

	mu      sync.Mutex
	mode    proxyMode
	changed chan struct{}         // closed and replaced at each mode change
	open    map[net.Conn]struct{} // both ends of every forwarded connection
	conns   sync.WaitGroup
}

func newProxy(backend string, log *eventLog) (*proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{l: l, backend: backend, log: log, changed: make(chan struct{}), open: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

// url is what Releases name as their chart repository.
func (p *proxy) url() string { return "http://" + p.l.Addr().String() }

// https is the proxy's address as the server of a kubeconfig (TLS goes through it).
func (p *proxy) https() string { return "https://" + p.l.Addr().String() }

// setMode changes what happens to connections; proxyReset also resets every open one.
func (p *proxy) setMode(m proxyMode) {
	p.mu.Lock()
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
	var cut []net.Conn
	if m == proxyReset {
		for c := range p.open {
			cut = append(cut, c)
		}
	}
	p.mu.Unlock()
	for _, c := range cut {
		reset(c)
	}
}

// track registers (or, with add false, forgets) an open connection.
func (p *proxy) track(add bool, cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		if add {
			p.open[c] = struct{}{}
		} else {
			delete(p.open, c)
		}
	}
}

func (p *proxy) current() (proxyMode, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode, p.changed
}

func (p *proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.conns.Add(1)
		go func() {
			defer p.conns.Done()
			p.handle(c)
		}()
	}
}

func (p *proxy) handle(c net.Conn) {
	mode, changed := p.current()
	switch mode {
	case proxyReset:
		reset(c)
		return
	case proxyStall:
		select {
		case <-changed:
		case <-time.After(2 * time.Minute): // bounded: a stall never outlives the run
		}
		reset(c)
		return
	}
	b, err := net.DialTimeout("tcp", p.backend, 5*time.Second)
	if err != nil {
		reset(c)
		return
	}
	p.track(true, c, b)
	defer p.track(false, c, b)
	done := make(chan struct{}, 2)
	go func() { p.pipe(b, c); done <- struct{}{} }()
	go func() { p.pipe(c, b); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = b.Close()
	<-done
}

// pipe copies from src to dst as the mode says at each read: at once (pass), 2 KiB
// per 100 ms (slow), or not at all (stall: it holds what it read until the mode
// changes, then resets both ends). A reset mode has closed both ends already.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.forward(dst, src, buf[:n]) {
			return
		}
		if err != nil {
			return
		}
	}
}

// forward writes b to dst as the mode says; false when the connection is done.
func (p *proxy) forward(dst, src net.Conn, b []byte) bool {
	mode, changed := p.current()
	switch mode {
	case proxyStall:
		select {
		case <-changed:
		case <-time.After(2 * time.Minute): // bounded: a stall never outlives the run
		}
		reset(src)
		reset(dst)
		return false
	case proxySlow:
		for len(b) > 0 {
			n := min(len(b), 2048)
			if _, err := dst.Write(b[:n]); err != nil {
				return false
			}
			b = b[n:]
			time.Sleep(100 * time.Millisecond) // the fault itself: a slow link
		}
		return true
	}
	_, err := dst.Write(b)
	return err == nil
}

// reset closes c with SO_LINGER 0, so the peer gets a RST.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (p *proxy) close() {
	_ = p.l.Close()
	p.setMode(proxyPass) // releases stalled connections
}
