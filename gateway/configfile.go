package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/tailscale/hujson"
)

// MaxConfigFileSize bounds how much of a config file is read.
const MaxConfigFileSize = 4 << 20

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxConfigFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxConfigFileSize)
	}
	return data, nil
}

func decodeHuJSON(path string, data []byte, v any) error {
	std, err := hujson.Standardize(slices.Clone(data))
	if err != nil {
		return fmt.Errorf("%s: not valid JSON or HuJSON: %w", path, err)
	}
	if err := json.Unmarshal(std, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// loadConfigRoot also returns a fingerprint of the content, so that a
// poller can tell whether the file changed.
func loadConfigRoot(path string) (map[string]any, string, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, "", err
	}
	var root any
	if err := decodeHuJSON(path, data, &root); err != nil {
		return nil, "", err
	}
	m, ok := root.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("%s: the config must be one JSON object", path)
	}
	sum := sha256.Sum256(data)
	return m, hex.EncodeToString(sum[:]), nil
}
