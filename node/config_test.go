package node

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/protocol"
)

func TestConnectURL(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"http://127.0.0.1:7780", "ws://127.0.0.1:7780/v1/nodes/connect", ""},
		{"http://127.0.0.1:7780/", "ws://127.0.0.1:7780/v1/nodes/connect", ""},
		{"https://gw.example.com/skillgate/", "wss://gw.example.com/skillgate/v1/nodes/connect", ""},
		{"ws://gw:80", "ws://gw:80/v1/nodes/connect", ""},
		{"WSS://gw", "wss://gw/v1/nodes/connect", ""},
		{" http://gw?x=1#frag ", "ws://gw/v1/nodes/connect?x=1", ""},
		{"ftp://gw", "", "the scheme must be http, https, ws or wss"},
		{"127.0.0.1:7780", "", "the scheme must be"},
		{"http://", "", "has no host"},
		{"http://user:pw@gw", "", "credentials in the URL are not supported"},
		{"http://gw/%zz", "", "not a URL"},
	}
	for _, tt := range tests {
		got, err := ConnectURL(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ConnectURL(%q) error %v, want …%s…", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ConnectURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := Config{Gateway: "http://127.0.0.1:1", Path: []string{"/usr/bin", "/usr/bin/", "/bin"}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if c.ID != host || !reflect.DeepEqual(c.Roles, []string{"execution"}) ||
		!reflect.DeepEqual(c.Capabilities, protocol.BaselineCapabilities) ||
		c.Recheck != 10*time.Second || c.Logger == nil || !reflect.DeepEqual(c.Path, []string{"/usr/bin", "/bin"}) ||
		c.MoveBack != 30*time.Second || c.MoveBackWindow != time.Minute {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	base := func() Config { return Config{Gateway: "http://127.0.0.1:1", ID: "n", Path: []string{"/bin"}} }
	tests := []struct {
		name   string
		change func(*Config)
		field  string
		msg    string
	}{
		{"no gateway", func(c *Config) { c.Gateway = "" }, "gateway", "is required"},
		{"bad gateway", func(c *Config) { c.Gateway = "gw:1" }, "gateway", "scheme"},
		{"bad id", func(c *Config) { c.ID = "a/b" }, "id", "slash"},
		{"bad role", func(c *Config) { c.Roles = []string{"gpu"} }, "roles", `roles[0]: unknown role "gpu"`},
		{"bad capability", func(c *Config) { c.Capabilities = []string{"fly"} }, "capabilities", `unknown capability "fly"`},
		{"missing baseline", func(c *Config) { c.Capabilities = []string{"shell.exec"} }, "capabilities", "an execution host must have"},
		{"relative path", func(c *Config) { c.Path = []string{"bin"} }, "path", `"bin" is not an absolute directory`},
		{"tiny recheck", func(c *Config) { c.Recheck = time.Millisecond }, "recheck", "shorter than 10ms"},
		{"negative recheck", func(c *Config) { c.Recheck = -time.Second }, "recheck", "shorter than"},
		{"tiny move back", func(c *Config) { c.MoveBack = time.Millisecond }, "moveBack", "shorter than 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.change(&c)
			_, err := New(c)
			ce, ok := errors.AsType[*ConfigError](err)
			if !ok {
				t.Fatalf("New: %v (%T), want *ConfigError", err, err)
			}
			if ce.Field != tt.field || !strings.Contains(ce.Error(), tt.msg) {
				t.Fatalf("got field %q: %v; want field %q, …%s…", ce.Field, ce, tt.field, tt.msg)
			}
		})
	}
	// A specialized host needs no baseline capability.
	c := base()
	c.Roles = []string{"specialized"}
	c.Capabilities = []string{"text.search"}
	if _, err := New(c); err != nil {
		t.Fatalf("specialized host: %v", err)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "node.hujson")
	content := `{
  // where the gateway listens
  "gateway": "https://gw.example.com",
  "id": "mac-1",
  "roles": ["execution"],
  "capabilities": "filesystem.list, filesystem.read,filesystem.write,shell.exec,text.search",
  "path": ["/opt/bin", "/usr/bin"],
  "recheck": "30s",
  "moveBack": "1m",
  "moveBackWindow": "0s",
  "tokenFile": "token", /* next to this file */
}`
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	fc, err := LoadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	want := FileConfig{
		Gateway: "https://gw.example.com", ID: "mac-1", Roles: []string{"execution"},
		Capabilities: []string{"filesystem.list", "filesystem.read", "filesystem.write", "shell.exec", "text.search"},
		Path:         []string{"/opt/bin", "/usr/bin"}, Recheck: 30 * time.Second,
		MoveBack: time.Minute, MoveBackWindow: 0,
		TokenFile: filepath.Join(dir, "token"),
		Set: map[string]bool{"gateway": true, "id": true, "roles": true, "capabilities": true,
			"path": true, "recheck": true, "moveBack": true, "moveBackWindow": true, "tokenFile": true},
	}
	if !reflect.DeepEqual(fc, want) {
		t.Fatalf("LoadFile\n got %+v\nwant %+v", fc, want)
	}
	if runtime.GOOS != "windows" {
		if err := os.WriteFile(name, []byte(`{"path": "/a:/b::/c"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if fc, err := LoadFile(name); err != nil || !reflect.DeepEqual(fc.Path, []string{"/a", "/b", "/c"}) {
			t.Fatalf("path as a string: %+v, %v", fc, err)
		}
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ content, msg string }{
		{`{"gateway": 1}`, `: gateway: must be a string`},
		{`{"recheck": "10"}`, `: recheck: "10" is not a positive duration`},
		{`{"recheck": "-1s"}`, `: recheck: "-1s" is not a positive duration`},
		{`{"roles": [1]}`, `: roles: must be a list of strings or one string`},
		{`{"moveBack": "-1s"}`, `: moveBack: "-1s" is not a duration of 0 or more`},
		{`{"moveBackWindow": "soon"}`, `: moveBackWindow: "soon" is not a duration of 0 or more`},
		{`{"gatway": "x"}`, `: gatway: unknown key`},
		{`{"token": "x"}`, `: token: secrets do not belong in the config file`},
		{`[]`, `: must be one JSON object`},
		{`null`, `: must be one JSON object`},
		{`{"gateway": "x",,}`, `node.hujson: hujson: line 1`},
	}
	for _, tt := range tests {
		name := filepath.Join(dir, "node.hujson")
		if err := os.WriteFile(name, []byte(tt.content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadFile(name)
		if err == nil || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), name) {
			t.Errorf("LoadFile(%s): %v, want %s…%s…", tt.content, err, name, tt.msg)
		}
	}
	if _, err := LoadFile(filepath.Join(dir, "absent.hujson")); err == nil || !strings.Contains(err.Error(), "absent.hujson") {
		t.Errorf("missing file: %v", err)
	}
}
