package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		err     error
		failure int
		code    int
		stderr  string
	}{
		{nil, 1, 0, ""},
		{flag.ErrHelp, 1, 0, ""},
		{fmt.Errorf("parsing: %w", flag.ErrHelp), 2, 0, ""},
		{ExitError{Code: 1}, 2, 1, ""},
		{fmt.Errorf("validate: %w", ExitError{Code: 3}), 2, 3, ""},
		{Usagef("--store is required"), 1, 2, "prog cmd: --store is required\n"},
		{fmt.Errorf("--config: %w", Usagef("bad key")), 1, 2, "prog cmd: --config: bad key\n"},
		{errors.New("gateway refused"), 1, 1, "prog cmd: gateway refused\n"},
		{errors.New("store down"), 2, 2, "prog cmd: store down\n"},
		// Messages may quote files and peers: they cannot drive the terminal.
		{errors.New("node \x1b[2Jx\nfake line"), 1, 1, "prog cmd: node \\x1b[2Jx\\nfake line\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if code := ExitCode(&b, "prog cmd", tt.err, tt.failure); code != tt.code || b.String() != tt.stderr {
			t.Errorf("ExitCode(%v, failure %d) = %d, stderr %q; want %d, %q", tt.err, tt.failure, code, b.String(), tt.code, tt.stderr)
		}
	}
}

func TestIsUsage(t *testing.T) {
	if !IsUsage(fmt.Errorf("x: %w", Usagef("y"))) || IsUsage(errors.New("y")) || IsUsage(nil) {
		t.Error("IsUsage misjudges")
	}
}
