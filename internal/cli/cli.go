// Package cli is the command-line glue that skillgate's three programs
// (cmd/skillgate, cmd/skillgate-node, cmd/skillgate-fleet) share, one
// concern per file:
//
//   - exit.go: usage errors (exit status 2), silent exits, and the one
//     mapping from a command's error to its exit status and message;
//   - flags.go: flag sets that report a bad flag instead of exiting, and
//     the rule that a flag given on the command line wins over the config
//     file;
//   - token.go: secret tokens, read from a file or the environment, never
//     from a flag's value (a command line shows in ps);
//   - gateway.go: a gateway's base URL (http, https, ws or wss) and the
//     URLs derived from it;
//   - hujson.go: HuJSON (JSON with comments and trailing commas) files,
//     whole or as a stream;
//   - printable.go: Printable, for text from outside the program.
//
// It holds no state and starts no goroutines. It may import only the
// standard library, protocol (the wire's names and rules), internal/textsafe
// (the rule of unsafe characters) and github.com/tailscale/hujson: never gateway, store, catalog, eligibility, node
// or an AWS package, so that every binary, the node agent included, can
// link it without pulling in the others' dependencies.
package cli
