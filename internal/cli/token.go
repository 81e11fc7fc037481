package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
)

// The environment variables holding skillgate's secrets. Secrets never go
// on a command line (it shows in ps): a program reads them from one of
// these, or from a file named by a flag.
const (
	// NodeTokenEnv holds the token nodes present in connect; the gateway
	// reads its shared node token from it too.
	NodeTokenEnv = "SKILLGATE_NODE_TOKEN"
	// AgentTokenEnv holds the agents' bearer token for /v1/….
	AgentTokenEnv = "SKILLGATE_AGENT_TOKEN"
)

// ReadToken returns the token held in file, trimmed of surrounding white
// space, or, when file is "", the value of the environment variable env,
// trimmed ("" when it is unset). An empty file is an error. Errors do not
// name the flag; the caller adds it. This is the rule of the load tools
// (skillgate-fleet); the node agent uses ReadTokenStrict.
func ReadToken(file, env string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(env)), nil
	}
	b, err := readTokenFile(file)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s is empty; write the token into it", file)
	}
	return tok, nil
}

// ReadTokenStrict is the node agent's rule, for a secret a service keeps
// for months: file wins over env; the file is looked at before it is read,
// and log warned when group or others may read it; it is trimmed of
// surrounding white space and must then hold one non-empty line; log is
// told when env is set too, and so ignored. The environment's value is
// used as it is. Errors do not name the flag; the caller adds it.
func ReadTokenStrict(file, env string, log *slog.Logger) (string, error) {
	if file == "" {
		return os.Getenv(env), nil
	}
	fi, err := os.Stat(file)
	if err != nil {
		return "", err
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("token file is readable by other users; chmod 600 it", "file", file, "mode", fi.Mode().Perm().String())
	}
	b, err := readTokenFile(file)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("%s is empty", file)
	}
	if strings.ContainsAny(token, "\r\n") {
		return "", fmt.Errorf("%s holds more than one line; it must hold only the token", file)
	}
	if os.Getenv(env) != "" {
		log.Info("using the token file; " + env + " is ignored")
	}
	return token, nil
}

// maxTokenFile bounds what is read of a token file: a token is a line.
const maxTokenFile = 64 << 10

// readTokenFile reads a token file, at most maxTokenFile bytes.
func readTokenFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxTokenFile {
		return nil, fmt.Errorf("%s is larger than %d bytes; it must hold only the token", file, maxTokenFile)
	}
	return b, nil
}
