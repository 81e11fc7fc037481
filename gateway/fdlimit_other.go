//go:build !unix

package gateway

// openFileLimit is unknown here: no descriptor budget.
func openFileLimit() int { return 0 }
