package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// UsageError is a bad command line, configuration or input file: the
// program exits with status 2 and the message, which names the flag, file
// or field.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// LinesError is unusable input with several problems (a config file's):
// printed one a line, each as "prefix: Prefix+line", and exit status 2.
type LinesError struct {
	Prefix string // e.g. "--config: "
	Lines  []string
}

func (e *LinesError) Error() string {
	out := make([]string, len(e.Lines))
	for i, l := range e.Lines {
		out[i] = e.Prefix + l
	}
	return strings.Join(out, "\n")
}

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Sprintf(format, args...)}
}

// IsUsage reports whether err is, or wraps, a *UsageError.
func IsUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

// ExitError ends the program with Code and prints nothing: the command
// has already said why (validate's findings, a refusal the node logged).
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode returns the exit status for the error a command returned and
// prints its message, if any, to stderr as "prefix: message":
//
//   - nil and flag.ErrHelp (the flags were printed): 0, nothing printed;
//   - an ExitError: its Code, nothing printed;
//   - a usage error (*UsageError): 2;
//   - any other error: failure (1 for the node and the fleet, whose usage
//     errors are the only status 2; 2 for skillgate, whose failures are
//     unusable input).
//
// The message passes through Printable: it may quote a config file, a
// store key, a node or the gateway.
func ExitCode(stderr io.Writer, prefix string, err error, failure int) int {
	var ee ExitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.Code
	}
	var le *LinesError
	if errors.As(err, &le) {
		// Each line escaped on its own: a problem's text may quote a key
		// the file holds, and no line can pass for another.
		for _, l := range le.Lines {
			fmt.Fprintf(stderr, "%s: %s\n", prefix, Printable(le.Prefix+l))
		}
		return 2
	}
	fmt.Fprintf(stderr, "%s: %s\n", prefix, Printable(err.Error()))
	if IsUsage(err) {
		return 2
	}
	return failure
}
