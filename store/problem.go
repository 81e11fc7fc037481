package store

import (
	"context"
	"errors"
	"io/fs"
)

// Problem says what went wrong with a store in an operator's words: the
// gateway shows it on its endpoints and in its log, and `skillgate status`
// prints it. The raw error (an SDK's chain of wrapped messages) stays in
// the log only.
type Problem struct {
	// Cause is what failed, fit for the open /readyz: it names no endpoint
	// (which names the account), no local path, no OS error text and no
	// secret. Example: `bucket "skills" does not exist`.
	Cause string
	// Detail is Cause with where it happened (the endpoint, a directory)
	// and the service's own words, for the log and the agent endpoints,
	// which need a token (or loopback). Never a secret.
	Detail string
	// Hint says what to check or do about it.
	Hint string
}

// Error is a store error explained: Explain returns its Problem. Its
// message is the underlying error's, so that logs keep every word.
type Error struct {
	Problem
	Err error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Explain returns the Problem of a store error: the one the store attached
// (an *Error), else one read from the error's kind.
func Explain(err error) Problem {
	var e *Error
	if errors.As(err, &e) {
		return e.Problem
	}
	var pe *fs.PathError
	switch {
	case err == nil:
		return Problem{}
	case errors.Is(err, context.DeadlineExceeded):
		return Problem{
			Cause:  "the store did not answer in time",
			Detail: "the store did not answer in time: " + err.Error(),
			Hint:   "check that the storage service is up and reachable from the gateway",
		}
	case errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist):
		return Problem{
			Cause:  "the store directory does not exist",
			Detail: err.Error(),
			Hint:   "check --store: the directory (or a directory under it) was removed; the log names the path",
		}
	case errors.As(err, &pe):
		// The OS's words ("permission denied") are for the log: the
		// open /readyz says what is wrong, not how the system put it.
		return Problem{
			Cause:  "the store directory cannot be read",
			Detail: err.Error(),
			Hint:   "check that the gateway's user may read every directory of the store; the log names the path and the error",
		}
	}
	return Problem{
		Cause:  "the store failed; the full error is in the gateway log",
		Detail: err.Error(),
		Hint:   "see the gateway log for the full error",
	}
}
