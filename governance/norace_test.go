//go:build !race

package governance

// raceEnabled: the tests run under the race detector (-race).
const raceEnabled = false
