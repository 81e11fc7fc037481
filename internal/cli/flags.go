package cli

import (
	"flag"
	"io"
)

// NewFlagSet returns a flag set named for the command line ("skillgate
// eval") that reports errors to stderr instead of exiting.
func NewFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// Given reports whether the flag name was set on the command line that fs
// parsed (to its default value too), as opposed to left at its default.
func Given(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// FlagOverFile merges one setting of a command line and its config file:
// a flag given on the command line wins over the file. It returns flagVal
// when the flag name was given, else fileVal when inFile (the file sets
// the key), else flagVal, the flag's default.
func FlagOverFile[T any](fs *flag.FlagSet, name string, flagVal, fileVal T, inFile bool) T {
	if inFile && !Given(fs, name) {
		return fileVal
	}
	return flagVal
}

// Source names where a setting came from, for error messages: "FILE: key"
// when the config file set it (inFile) and the flag name was not given,
// else "--name".
func Source(fs *flag.FlagSet, name, file, key string, inFile bool) string {
	if inFile && !Given(fs, name) {
		return file + ": " + key
	}
	return "--" + name
}
