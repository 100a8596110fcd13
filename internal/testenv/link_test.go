package testenv_test

import (
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"kumodo.io/convoy/internal/testenv"
)

// echoServer answers each connection with what it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

// roundTrip writes msg on c and reads as much back within wait.
func roundTrip(c net.Conn, msg string, wait time.Duration) (string, error) {
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	b := make([]byte, len(msg))
	_, err := io.ReadFull(c, b)
	return string(b), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A Link forwards while it passes; hanging, it holds open and new connections alike
// (no answer, no error: the reader times out), and counts them; passing again, the
// held ones are reset and new ones forward.
func TestLinkHoldsConnectionsWhileHanging(t *testing.T) {
	link, err := testenv.NewLink(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", link.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	open := dial()
	if got, err := roundTrip(open, "one", 5*time.Second); err != nil || got != "one" {
		t.Fatalf("through the passing link: %q, %v", got, err)
	}
	link.Hang()
	if got, err := roundTrip(open, "two", 500*time.Millisecond); !isTimeout(err) {
		t.Errorf("an open connection through the hanging link: %q, %v; want a read timeout", got, err)
	}
	held := dial()
	if got, err := roundTrip(held, "three", 500*time.Millisecond); !isTimeout(err) {
		t.Errorf("a new connection through the hanging link: %q, %v; want a read timeout", got, err)
	}
	if link.Open() != 2 || link.Accepted() != 2 || !link.Hanging() {
		t.Errorf("open %d, accepted %d, hanging %v; want 2, 2, true", link.Open(), link.Accepted(), link.Hanging())
	}

	link.Pass()
	for name, c := range map[string]net.Conn{"open": open, "held": held} {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 8)); err == nil || isTimeout(err) {
			t.Errorf("the %s connection after the link passes again: %v; want it reset", name, err)
		}
	}
	if got, err := roundTrip(dial(), "four", 5*time.Second); err != nil || got != "four" {
		t.Errorf("a new connection after the link passes again: %q, %v", got, err)
	}
	testenv.Eventually(t, t.Context(), "the reset connections forgotten", 5*time.Second, func() (bool, string) {
		return link.Open() == 1, "open connections: " + strconv.Itoa(link.Open())
	})
}
