package gittest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHServer serves the repositories of a Server over ssh (git-upload-pack only),
// to the one client key it generated.
type SSHServer struct {
	// Addr is host:port.
	Addr string
	// Identity is the PEM private key the server accepts, and KnownHosts the
	// known_hosts line of its host key: the keys of a Secret.
	Identity   []byte
	KnownHosts []byte

	repos *Server
	mu    sync.Mutex
	execs int
}

// NewSSHServer serves the repositories of repos over ssh until the test ends.
func NewSSHServer(t TB, repos *Server) *SSHServer {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostSigner, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	clientPub, clientPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(clientPriv, "")
	if err != nil {
		t.Fatal(err)
	}
	authorized, err := ssh.NewPublicKey(clientPub)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if bytes.Equal(key.Marshal(), authorized.Marshal()) {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	cfg.AddHostKey(hostSigner)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SSHServer{Addr: ln.Addr().String(), Identity: pem.EncodeToMemory(block), repos: repos}
	s.KnownHosts = []byte(knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, hostSigner.PublicKey()) + "\n")
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.serveConn(conn, cfg)
			}()
		}
	}()
	return s
}

// RepoURL is the ssh:// URL of repository name.
func (s *SSHServer) RepoURL(name string) string { return "ssh://git@" + s.Addr + "/" + name }

// Execs is how many git-upload-pack commands the server ran.
func (s *SSHServer) Execs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.execs
}

func (s *SSHServer) serveConn(conn net.Conn, cfg *ssh.ServerConfig) {
	defer conn.Close()
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		go s.serveSession(ch, chReqs)
	}
}

func (s *SSHServer) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for req := range reqs {
		switch req.Type {
		case "env":
			_ = req.Reply(true, nil)
		case "exec":
			var payload struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			code := s.exec(ch, payload.Command)
			_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, code))
			return
		default:
			_ = req.Reply(false, nil)
		}
	}
}

// exec runs git-upload-pack '<path>' on the channel.
func (s *SSHServer) exec(ch ssh.Channel, command string) uint32 {
	s.mu.Lock()
	s.execs++
	s.mu.Unlock()
	name, ok := strings.CutPrefix(command, "git-upload-pack ")
	if !ok {
		fmt.Fprintf(ch.Stderr(), "only git-upload-pack\n")
		return 1
	}
	name = strings.Trim(strings.Trim(name, "'"), "/")
	s.repos.mu.Lock()
	repo := s.repos.repos[name]
	s.repos.mu.Unlock()
	if repo == nil {
		fmt.Fprintf(ch.Stderr(), "fatal: '%s' does not appear to be a git repository\n", name)
		return 128
	}
	ar, err := repo.advertise()
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "%v\n", err)
		return 1
	}
	if err := ar.Encode(ch); err != nil {
		return 1
	}
	req := packp.NewUploadPackRequest()
	if err := req.Decode(ch); err != nil {
		return 0 // a listing: the client sent a flush and went
	}
	// The wants end with a flush; the client then sends its haves and "done" before it
	// reads the answer. Answering (and closing the channel) before reading them made the
	// client's write of "done" fail with EOF now and then.
	if !readDone(ch) {
		return 1
	}
	var buf bytes.Buffer
	if _, err := repo.uploadPack(req, &buf); err != nil {
		_ = pktline.NewEncoder(ch).Encodef("ERR %s\n", err)
		return 1
	}
	_, _ = io.Copy(ch, &buf)
	return 0
}

// readDone reads the client's haves up to its "done" line; false when the client went
// before it.
func readDone(r io.Reader) bool {
	sc := pktline.NewScanner(r)
	for sc.Scan() {
		if bytes.Equal(bytes.TrimSpace(sc.Bytes()), []byte("done")) {
			return true
		}
	}
	return false
}
