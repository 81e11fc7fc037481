// Package logging sets up the structured loggers of skillgate's binaries:
// tint (colored, human) on terminals, JSON otherwise, and parses the
// --log-level values. It owns the format of log lines, not what is
// logged: the packages that log take a *slog.Logger. It imports only the
// standard library, tint and go-isatty, so that the node agent can link
// it; never a skillgate package.
package logging

import (
	"io"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/lmittmann/tint"
	"github.com/mattn/go-isatty"
)

// New returns a logger writing to w at level: tint when w is a terminal,
// JSON lines otherwise.
func New(w io.Writer, level slog.Level) *slog.Logger {
	if f, ok := w.(*os.File); ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly}))
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// ParseLevel reads "debug", "info", "warn" or "error".
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// SetDefault makes l the process's default logger, and so the output of
// the standard log package too: a library that logs with log.Printf (or
// slog's default) then writes lines in l's format, not plain text into
// the middle of a JSON log. It returns the function that puts back what
// was there before (for commands run in-process, as tests do).
func SetDefault(l *slog.Logger) (restore func()) {
	prev, out, flags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(l)
	return func() {
		slog.SetDefault(prev)
		log.SetOutput(out)
		log.SetFlags(flags)
	}
}
