package cli

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func writeToken(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return name
}

func TestReadToken(t *testing.T) {
	const env = "SKILLGATE_TEST_TOKEN"
	t.Setenv(env, "  from-env \n")
	if tok, err := ReadToken("", env); tok != "from-env" || err != nil {
		t.Errorf("from the environment: %q, %v", tok, err)
	}
	if tok, err := ReadToken(writeToken(t, "\n file-token\n", 0o600), env); tok != "file-token" || err != nil {
		t.Errorf("from a file: %q, %v", tok, err)
	}
	empty := writeToken(t, " \n", 0o600)
	if _, err := ReadToken(empty, env); err == nil || err.Error() != empty+" is empty; write the token into it" {
		t.Errorf("empty file: %v", err)
	}
	if _, err := ReadToken(filepath.Join(t.TempDir(), "absent"), env); err == nil || !strings.HasPrefix(err.Error(), "open ") {
		t.Errorf("absent file: %v", err)
	}
}

func TestReadTokenStrict(t *testing.T) {
	const env = "SKILLGATE_TEST_TOKEN"
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	t.Setenv(env, " raw ")
	if tok, err := ReadTokenStrict("", env, log); tok != " raw " || err != nil {
		t.Errorf("from the environment: %q, %v; want it as it is", tok, err)
	}
	tok, err := ReadTokenStrict(writeToken(t, "file-token\n", 0o600), env, log)
	if tok != "file-token" || err != nil {
		t.Errorf("from a file: %q, %v", tok, err)
	}
	if l := logs.String(); !strings.Contains(l, "using the token file; "+env+" is ignored") || strings.Contains(l, "readable by other users") {
		t.Errorf("logs: %s", l)
	}
	if runtime.GOOS != "windows" {
		logs.Reset()
		if _, err := ReadTokenStrict(writeToken(t, "tok", 0o644), env, log); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "token file is readable by other users; chmod 600 it") {
			t.Errorf("no warning about mode 0644: %s", logs.String())
		}
	}
	two := writeToken(t, "a\nb\n", 0o600)
	if _, err := ReadTokenStrict(two, env, log); err == nil || err.Error() != two+" holds more than one line; it must hold only the token" {
		t.Errorf("two lines: %v", err)
	}
	empty := writeToken(t, "\n", 0o600)
	if _, err := ReadTokenStrict(empty, env, log); err == nil || err.Error() != empty+" is empty" {
		t.Errorf("empty file: %v", err)
	}
	if _, err := ReadTokenStrict(filepath.Join(t.TempDir(), "absent"), env, log); err == nil || !strings.HasPrefix(err.Error(), "stat ") {
		t.Errorf("absent file: %v", err)
	}
}

func TestTokenFileBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "token")
	os.WriteFile(big, []byte(strings.Repeat("x", maxTokenFile+1)), 0o600)
	want := big + " is larger than 65536 bytes; it must hold only the token"
	if _, err := ReadToken(big, ""); err == nil || err.Error() != want {
		t.Errorf("ReadToken: %v, want %s", err, want)
	}
	if _, err := ReadTokenStrict(big, "", slog.New(slog.DiscardHandler)); err == nil || err.Error() != want {
		t.Errorf("ReadTokenStrict: %v, want %s", err, want)
	}
}
