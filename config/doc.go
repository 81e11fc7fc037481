// Package config is the gateway config file: every setting skillgate
// reads is declared once in a table (its key path, type, default, whether a
// reload applies it, its validation and a line of documentation), and
// parsing, reload decisions, error messages, DESIGN.md's settings table and
// the JSON Schema of `skillgate config schema` all come from that table.
//
// The file's root belongs to the operator: it is also the namespace that
// requires.config paths resolve against, and it is often an OpenClaw or GSV
// config. In the objects skillgate shares with those configs (the root,
// gateway, agents, agents.defaults, each agents.list[] entry, skills,
// skills.limits and each skills.entries.<key>) a key skillgate does not
// know is kept as it is, unless it is within an edit or two of a key that
// skillgate or OpenClaw documents there (a typo: refused with the
// suggestion). In the objects only skillgate defines (gateway.prompt,
// gateway.governance, gateway.cluster, agents.<id>, …) every unknown key is
// refused. A known key with a value of the wrong type is refused naming the
// type expected: policy fails closed.
//
// The package does no I/O: bytes in, a File or every problem with its
// file:line:col out.
package config
