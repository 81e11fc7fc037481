package node

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestCleanPath(t *testing.T) {
	got := cleanPath([]string{"/usr/bin", "", ".", "bin", "/usr/bin/", "/bin", "/usr//bin", "/opt/x/../bin"})
	want := []string{"/usr/bin", "/bin", "/opt/bin"}
	if runtime.GOOS == "windows" {
		t.Skip("unix paths")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cleanPath = %q, want %q", got, want)
	}
}

func fakeShell(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fakesh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no login shell on windows")
	}
	extras := []string{"/usr/local/bin", "/opt/homebrew/bin"}
	tests := []struct {
		name    string
		shell   string
		timeout time.Duration
		want    []string
		err     string
	}{
		{
			name:  "login shell with a banner",
			shell: fakeShell(t, `echo "Welcome!"; printf %s "/shell/bin:/usr/local/bin:relative:/shell/bin"`),
			want:  append([]string{"/shell/bin"}, extras...),
		},
		{
			name:  "no SHELL",
			shell: "",
			want:  append([]string{"/env/bin"}, extras...),
			err:   "SHELL is not set",
		},
		{
			name:  "shell fails",
			shell: fakeShell(t, `exit 3`),
			want:  append([]string{"/env/bin"}, extras...),
			err:   "exit status 3",
		},
		{
			name:  "shell prints nothing",
			shell: fakeShell(t, `true`),
			want:  append([]string{"/env/bin"}, extras...),
			err:   "printed no PATH",
		},
		{
			name:    "shell hangs",
			shell:   fakeShell(t, `exec sleep 30`),
			timeout: 100 * time.Millisecond,
			want:    append([]string{"/env/bin"}, extras...),
			err:     "killed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = wait
			}
			start := time.Now()
			got, err := defaultPath(tt.shell, "/env/bin:/env/bin/", timeout)
			if time.Since(start) > timeout+2*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("dirs %q, want %q", got, tt.want)
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("err %v, want …%s…", err, tt.err)
			}
		})
	}
	// The real thing returns something usable wherever the tests run.
	if len(DefaultPath()) == 0 {
		t.Error("DefaultPath() is empty")
	}
}
