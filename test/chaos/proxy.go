package chaos

import (
	"io"
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

// proxy is a loopback TCP proxy in front of the chart repository; its mode decides
// what happens to connections.
type proxy struct {
	l       net.Listener
	backend string
	log     *eventLog

	mu      sync.Mutex
	mode    proxyMode
	changed chan struct{} // closed and replaced at each mode change
	conns   sync.WaitGroup
}

func newProxy(backend string, log *eventLog) (*proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{l: l, backend: backend, log: log, changed: make(chan struct{})}
	go p.serve()
	return p, nil
}

// url is what Releases name as their chart repository.
func (p *proxy) url() string { return "http://" + p.l.Addr().String() }

func (p *proxy) setMode(m proxyMode) {
	p.mu.Lock()
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
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
	slow := mode == proxySlow
	done := make(chan struct{}, 2)
	go func() { pipe(b, c, slow); done <- struct{}{} }()
	go func() { pipe(c, b, slow); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = b.Close()
	<-done
}

// pipe copies from src to dst, 2 KiB per 100 ms when slow.
func pipe(dst, src net.Conn, slow bool) {
	if !slow {
		_, _ = io.Copy(dst, src)
		return
	}
	buf := make([]byte, 2048)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			time.Sleep(100 * time.Millisecond) // the fault itself: a slow link
		}
		if err != nil {
			return
		}
	}
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
