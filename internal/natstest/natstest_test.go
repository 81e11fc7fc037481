package natstest

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// info dials the server and returns the first line it sends (INFO {...}).
func info(s *Server) (string, error) {
	c, err := net.DialTimeout("tcp", s.addr(), time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return bufio.NewReader(c).ReadString('\n')
}

func TestStartStopRestartKill(t *testing.T) {
	s := Start(t)
	if want := "nats://127.0.0.1:"; !strings.HasPrefix(s.URL(), want) || s.Port() == 0 {
		t.Fatalf("URL = %q, Port = %d", s.URL(), s.Port())
	}
	line, err := info(s)
	if err != nil || !strings.HasPrefix(line, "INFO ") || !strings.Contains(line, `"jetstream":true`) {
		t.Fatalf("first line = %q, %v; want INFO with jetstream", line, err)
	}

	url := s.URL()
	s.Stop()
	if _, err := info(s); err == nil {
		t.Fatal("the server still answers after Stop")
	}
	s.Stop() // stopping twice is fine

	s.Restart(t)
	if s.URL() != url {
		t.Fatalf("URL after Restart = %q, want %q", s.URL(), url)
	}
	if line, err := info(s); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("after Restart: %q, %v", line, err)
	}

	s.Kill()
	if _, err := info(s); err == nil {
		t.Fatal("the server still answers after Kill")
	}
	if n := strings.Count(s.Output(), "--- 20"); n != 2 {
		t.Errorf("output has %d command lines, want 2:\n%s", n, s.Output())
	}
}

func TestNoBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GOPATH", t.TempDir())
	if _, err := findBinary(); !errors.Is(err, ErrNoBinary) || !strings.Contains(err.Error(), InstallCommand) {
		t.Errorf("findBinary with no nats-server = %v, want ErrNoBinary naming the install command", err)
	}
}
