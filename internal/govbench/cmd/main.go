// Command govbench measures the governance scanner on the labelled public
// skill sets (internal/govbench) and prints, per set, the held, blocked
// and flagged skills of each label, and per rule the skills it hit:
//
//	go run ./internal/govbench/cmd            # tables
//	go run ./internal/govbench/cmd -v         # … and the malicious skills not held
//	go run ./internal/govbench/cmd -markdown - # BENCHMARKS.md's section instead of the tables
//	go run ./internal/govbench/cmd -markdown F -commit SHA  # the tables, and the section to F (scripts/govbench.sh)
//
// It is a development tool, not one of the shipped binaries: flags and
// exit codes only. It runs from anywhere inside the module: the sets are
// found from the module root (../shared/corpus/external beside it).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/corpus"
	"github.com/skillgate/skillgate/internal/govbench"
)

func main() {
	markdown := flag.String("markdown", "", "also write BENCHMARKS.md's section to this file (- for stdout, instead of the tables)")
	verbose := flag.Bool("v", false, "also list the malicious skills not held")
	commit := flag.String("commit", "unknown", "the commit measured, for -markdown")
	command := flag.String("command", "make govbench", "the command line named by -markdown")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: govbench [-v] [-markdown FILE|- [-commit SHA] [-command LINE]]")
		os.Exit(2)
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "govbench:", err)
		os.Exit(2)
	}
	root, err := corpus.ModuleRoot(wd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "govbench:", err)
		os.Exit(1)
	}
	var results []*govbench.Result
	for _, sp := range govbench.Specs {
		r, err := govbench.Measure(root, sp, governance.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "govbench:", err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	meta := govbench.Meta{Command: *command, Date: time.Now(), Commit: *commit,
		Machine: fmt.Sprintf("%s %s/%s, %d cores", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())}
	switch *markdown {
	case "-":
		govbench.Markdown(os.Stdout, results, meta)
		return
	case "":
	default:
		var buf bytes.Buffer
		govbench.Markdown(&buf, results, meta)
		if err := os.WriteFile(*markdown, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "govbench:", err)
			os.Exit(1)
		}
	}
	govbench.Text(os.Stdout, results, *verbose)
}
