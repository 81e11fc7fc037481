package main

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/lmittmann/tint"
	"github.com/mattn/go-isatty"
)

// newLogger logs in colour for a person at a terminal, and as JSON lines
// for a service manager or log collector otherwise.
func newLogger(w io.Writer) *slog.Logger {
	if f, ok := w.(*os.File); ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return slog.New(tint.NewTextHandler(f, &tint.Options{Level: slog.LevelInfo, TimeFormat: time.TimeOnly}))
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
