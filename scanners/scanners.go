// Package scanners runs external skill scanners: operator-chosen programs
// (a YARA adapter, OpenClaw's install-policy hook, a SARIF-emitting
// linter …) that read a private, read-only copy of one skill directory and
// answer with a verdict and findings. It is the only code of the project
// that starts processes for governance.
//
// A scanner is described by a Config (gateway.governance.scanners[i]); Run
// writes the skill's files into a private temporary directory, runs the
// program there with no inherited environment but PATH and the names of
// Config.PassEnv, stdin closed, stdout bounded and a timeout that kills its
// whole process group, and turns its answer (the verdict format or SARIF
// 2.1.0) into a Result. Result.Effect maps a Result to a governance mode and
// reason. Cache and Pool let a gateway scan in the background and read
// results without ever waiting on a scan.
//
// Import rule: scanners imports the governance package only for its shared
// vocabulary (modes, severities, Finding, Input); governance never imports
// scanners, and scanners never imports gateway, config, catalog or a store:
// callers hand it the bytes.
package scanners

import "time"

// Answer formats (Config.Format).
const (
	FormatVerdict = "verdict" // {"verdict": "allow"|"warn"|"block", "findings": [...]} (the default)
	FormatSARIF   = "sarif"   // SARIF 2.1.0
)

// Verdicts of a Result.
const (
	VerdictAllow = "allow"
	VerdictWarn  = "warn"
	VerdictBlock = "block"
	VerdictError = "error" // the scanner failed: no answer (Result.Error says why)
)

// DirArg is the argument of Config.Exec replaced by the root of the skill's
// private copy. It is replaced only as a whole argument.
const DirArg = "{dir}"

// Defaults.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultConcurrency = 2     // scans at once in a Pool
	DefaultCacheSize   = 16384 // answers a Cache keeps (digest × scanner)
)

// Limits. Everything a scanner prints is bounded before it is kept.
const (
	MaxTimeout      = 10 * time.Minute // Config.Timeout above it is refused
	MaxStdout       = 1 << 20          // bytes of an answer; more is a failure
	MaxStderrKept   = 4 << 10          // bytes of stderr kept (the last ones), for the error
	MaxStderrQuoted = 200              // bytes of stderr quoted in Result.Error
	MaxFindings     = 100              // findings kept of one answer (the first ones)
	MaxRuleLen      = 128              // bytes of a finding's rule
	MaxSeverityLen  = 16               // bytes of a finding's severity
	MaxFileLen      = 512              // bytes of a finding's file
	MaxMessageLen   = 512              // bytes of a finding's message
	MaxErrorLen     = 400              // bytes of Result.Error
	MaxCopyFiles    = 4096             // files Run writes into the copy
	MaxCopyBytes    = 64 << 20         // bytes Run writes into the copy
	MaxNameLen      = 64               // bytes of Config.Name
)
