package gateway

import (
	"fmt"
	"io"
	"os"
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
