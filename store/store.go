// Package store is where skills are kept, as keys and bytes: an
// S3-compatible bucket (Cloudflare R2, AWS S3, MinIO) or a local directory
// laid out the same way, the Store interface both implement, opening a
// --store URL, redacting one for logs, and explaining a store's failure
// in an operator's words (Problem).
//
// It knows what a key and an object are, not what a skill is: it imports
// nothing of the project (internal/archtest checks it). Classifying keys
// into skills, agent views and loading are catalog's. The one piece of the
// layout it knows is the shape of a skill directory's key prefix
// (SkillDir), because the directory store must decide while it walks
// whether an entry it may not read holds one skill or the whole listing.
// The AWS SDK is linked here, so the node agent must never import this
// package.
package store

import (
	"context"
	"errors"
	"fmt"
)

// MaxFileSize is the largest file the store reads, and the one declaration
// of the cap of every file of a skill (SKILL.md included): a SKILL.md over
// it is not loaded (a diagnostic), another file is not read. Governance,
// which may not import the store, gets it as a value: catalog's loader and
// skillgate validate pass it as governance.Budget.MaxFileBytes and
// governance.Input.MaxFileBytes.
const MaxFileSize = 256 << 10

// Errors returned by Store.Get. Test with errors.Is.
var (
	ErrNotFound    = errors.New("no such key")
	ErrNotModified = errors.New("not modified")
	ErrTooLarge    = fmt.Errorf("file larger than %d KiB", MaxFileSize>>10)
)

// ErrNotRegular is the directory store's error for a named pipe, device or
// socket. It is an ErrNotFound (the gateway answers 404); catalog's Loader
// tells it apart to say why the skill is not loaded.
var ErrNotRegular = fmt.Errorf("not a regular file: %w", ErrNotFound)

// ErrUnreadable is the directory store's error for a file its process may
// not read (permission denied). catalog's Loader makes it one unread file
// of its skill, so that one such file holds its skill and no other.
var ErrUnreadable = errors.New("permission denied")

// Object is one listed key.
type Object struct {
	Key  string
	Size int64
	ETag string
	// NotRegular marks a directory-store entry that is not a regular file
	// (a named pipe, device or socket, or a symlink to one). It is listed
	// only so that a SKILL.md of that kind is reported: Get refuses it.
	NotRegular bool
	// Unreadable marks a directory-store entry inside a skill directory
	// that the store may not read (permission denied): a directory (its
	// Key then ends in "/", and nothing in it is listed) or a file it
	// cannot stat. A skill directory that cannot be read is one with Key
	// skills/{dir}/ or agents/{agentId}/skills/{dir}/. Listed instead of
	// failing the listing, so that one such entry holds its skill only.
	Unreadable bool
}

// Store is the storage a gateway reads skills from.
type Store interface {
	// List returns every key under prefix ("" for all), sorted by key,
	// following pagination to the end.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Get reads a key. When etag is not empty and still matches, it returns
	// ErrNotModified without transferring the body. Bodies over MaxFileSize
	// give ErrTooLarge; a missing key gives ErrNotFound.
	Get(ctx context.Context, key, etag string) (body []byte, newETag string, err error)
}
