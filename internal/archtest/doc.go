// Package archtest holds the architecture as a test: every "never" of the
// architecture page (../shared/ARCHITECTURE.md beside the checkout) and
// every import rule a package's doc comment states — which package may not
// import which, which imports only what, which does no I/O, who alone may
// import a package or an external module — is a row of the table in
// arch_test.go, checked against `go list -json ./...`. A package that
// breaks one fails the test, naming the rule and where it is written.
//
// It also lists the functions over 80 lines (funcs_test.go): each is either
// split or named, with the reason it stays whole, in docs/decisions.md.
//
// The package has no code of its own; nothing imports it.
package archtest
