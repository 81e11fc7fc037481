// Package catalog turns a store's keys into skills: it classifies listed
// keys by the bucket layout (Classify), builds the agent view, in which an
// agent's own skills shadow the global ones of the same directory
// (AgentView is its one definition; the gateway and the offline eval both
// use it), and loads skills: the Loader turns SKILL.md files into parsed
// skills and reads the other files of their directories for the
// governance scanner (within governance.Budget), through an ETag cache.
//
// It reads and parses; it never evaluates, nor scans. Of the project it is
// the one package that imports a store (store, for keys and bytes) together
// with skill (to parse) and governance (only for the types and caps of what
// it reads). It must never import eligibility, promptbuild, report, config
// or gateway, nor node or a cmd package (internal/archtest checks it).
package catalog
