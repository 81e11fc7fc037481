package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strconv"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/protocol"
)

// cmdHosts writes a host-facts file for `skillgate eval --hosts`: the facts
// the simulated nodes of `nodes` would report, so that eval can be sized
// and replayed offline on the same fleet without running one.
func cmdHosts(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate-fleet hosts", stderr)
	out := fs.String("out", "", "host-facts file to write (a JSON array, one host per line)")
	n := fs.Int("n", 10000, "number of hosts")
	mixPath := fs.String("mix", "", "HuJSON file of weighted node profiles (default: the built-in mix)")
	prefix := fs.String("id-prefix", "sim-", "host ids are this prefix followed by the host's index")
	seed := fs.Uint64("seed", 1, "seed of the per-host profile and name draws (the same as `nodes --seed`)")
	force := fs.Bool("force", false, "replace FILE if it exists")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *out == "":
		return cli.Usagef("--out is required: the file to write the host facts into")
	case *n < 0 || *n > maxNodes:
		return cli.Usagef("-n: %d is out of range (0…%d)", *n, maxNodes)
	}
	if *n > 0 {
		if err := protocol.ValidateID(*prefix + strconv.Itoa(*n-1)); err != nil {
			return cli.Usagef("--id-prefix: host ids would be invalid: %v", err)
		}
	}
	m, err := loadMix(*mixPath, *seed)
	if err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !*force {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(*out, flags, 0o644)
	if errors.Is(err, iofs.ErrExist) {
		return cli.Usagef("--out: %s already exists; choose another file or pass --force to replace it", *out)
	}
	if err != nil {
		return cli.Usagef("--out: %v", err)
	}
	if err := writeHosts(f, m, *n, *prefix); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	fmt.Fprintf(stdout, "wrote %d hosts to %s (seed %d); evaluate them with: skillgate eval --hosts %s --store DIR --agent main\n",
		*n, *out, *seed, *out)
	return nil
}

// writeHosts writes n hosts as a JSON array, one per line.
func writeHosts(w io.Writer, m *mix, n int, prefix string) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("[\n")
	for i := range n {
		facts := m.node(i)
		b, err := json.Marshal(facts.hostFacts(prefix + strconv.Itoa(i)))
		if err != nil {
			return err
		}
		bw.Write(b)
		if i < n-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

// hostFacts returns the node's facts as a gateway that asked for the whole
// synthetic vocabulary (and the profile's own names) would hold them.
// Only present binaries are listed: an absent name counts as false, and
// leaving the 270-odd false entries out keeps the file about five times
// smaller.
func (f *simNodeFacts) hostFacts(id string) protocol.HostFacts {
	h := f.info(id).HostFacts()
	for b := range f.prof.bins {
		h.HostBinStatus[b] = true
	}
	for i := range binPool {
		if f.bins[i/64]>>(i%64)&1 == 1 {
			h.HostBinStatus[binName(i)] = true
		}
	}
	h.Env = append(h.Env, f.prof.Env...)
	for i := range envPool {
		if name := envName(i); f.env[i/64]>>(i%64)&1 == 1 && !f.prof.env[name] {
			h.Env = append(h.Env, name)
		}
	}
	return h
}
