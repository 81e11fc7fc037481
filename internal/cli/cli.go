// Package cli holds what skillgate's command-line programs share: usage
// errors, which exit with status 2, and flag sets that report a bad flag
// instead of exiting.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// UsageError is a bad command line, configuration or input file: the
// program exits with status 2 and the message, which names the flag, file
// or field.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Sprintf(format, args...)}
}

// IsUsage reports whether err is, or wraps, a *UsageError.
func IsUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

// NewFlagSet returns a flag set named for the command line ("skillgate
// eval") that reports errors to stderr instead of exiting.
func NewFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}
