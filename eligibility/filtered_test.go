package eligibility

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/protocol"
)

// TestFiltered: how many connected hosts each host requirement rules out,
// in the order of the host filter chain, among the hosts that passed the
// requirements before it; [] whenever the chain does not run.
func TestFiltered(t *testing.T) {
	// 3 linux hosts with gh, 2 darwin without, 1 darwin with gh and tmux,
	// 1 specialized linux host.
	var fleet []protocol.HostFacts
	for i := range 3 {
		fleet = append(fleet, host(fmt.Sprintf("lin-%d", i), "linux", []string{"GH_TOKEN"}, "gh"))
	}
	fleet = append(fleet, host("mac-0", "darwin", nil), host("mac-1", "macOS", nil, "curl"), host("mac-2", "darwin", []string{"GH_TOKEN"}, "gh", "tmux"))
	fleet = append(fleet, protocol.HostFacts{ID: "spec", OS: "linux", Roles: []string{"specialized"}, Capabilities: []string{"text.search"}})
	f := func(req string, vals []string, n int) Filtered {
		return Filtered{Requirement: req, Values: vals, Hosts: n}
	}

	tests := []struct {
		name     string
		requires string
		always   bool
		config   string
		hosts    []protocol.HostFacts
		want     []Filtered
		hostIDs  []string
	}{
		{name: "os then bins", requires: `{"bins":["gh"],"os":["darwin"]}`, hosts: fleet,
			want: []Filtered{f("os", []string{"darwin"}, 4), f("bins", []string{"gh"}, 2)}, hostIDs: []string{"mac-2"}},
		{name: "the chain's order, not the file's", requires: `{"anyBins":["tmux","curl"],"env":["GH_TOKEN"],"hostRoles":["execution"]}`, hosts: fleet,
			want: []Filtered{f("hostRoles", []string{"execution"}, 1), f("env", []string{"GH_TOKEN"}, 2), f("anyBins", []string{"tmux", "curl"}, 3)}, hostIDs: []string{"mac-2"}},
		{name: "a requirement that rules out none is listed with 0", requires: `{"capabilities":["shell.exec"],"bins":["gh"]}`, hosts: fleet[:3],
			want: []Filtered{f("capabilities", []string{"shell.exec"}, 0), f("bins", []string{"gh"}, 0)}, hostIDs: []string{"lin-0", "lin-1", "lin-2"}},
		{name: "after the set is empty, later requirements rule out 0", requires: `{"os":["windows"],"env":["A"],"bins":["b"]}`, hosts: fleet,
			want: []Filtered{f("os", []string{"windows"}, 7), f("env", []string{"A"}, 0), f("bins", []string{"b"}, 0)}},
		{name: "emptied midway", requires: `{"os":["linux"],"bins":["tmux"],"anyBins":["gh"]}`, hosts: fleet,
			want: []Filtered{f("os", []string{"linux"}, 3), f("bins", []string{"tmux"}, 4), f("anyBins", []string{"gh"}, 0)}},
		{name: "normalized values", requires: `{"os":[" OSX","macos","win32"],"bins":["gh ","gh"]}`, hosts: fleet,
			want: []Filtered{f("os", []string{"darwin", "windows"}, 4), f("bins", []string{"gh"}, 2)}, hostIDs: []string{"mac-2"}},
		{name: "anyCapabilities", requires: `{"anyCapabilities":["text.search","filesystem.edit"]}`, hosts: fleet,
			want: []Filtered{f("anyCapabilities", []string{"text.search", "filesystem.edit"}, 6)}, hostIDs: []string{"spec"}},
		{name: "empty lists are not listed", requires: `{"bins":[],"env":["GH_TOKEN"],"os":null}`, hosts: fleet,
			want: []Filtered{f("env", []string{"GH_TOKEN"}, 3)}, hostIDs: []string{"lin-0", "lin-1", "lin-2", "mac-2"}},
		{name: "config fails, the chain still ran", requires: `{"bins":["gh"],"config":["nope"]}`, hosts: fleet,
			want: []Filtered{f("bins", []string{"gh"}, 3)}, hostIDs: []string{"lin-0", "lin-1", "lin-2", "mac-2"}},
		{name: "no connected hosts", requires: `{"bins":["gh"]}`, want: []Filtered{}},
		{name: "no host requirements", requires: `{"config":["a"]}`, config: `{"a":1}`, hosts: fleet, want: []Filtered{}},
		{name: "no requirements", hosts: fleet, want: []Filtered{}},
		{name: "always", requires: `{"bins":["nope"]}`, always: true, hosts: fleet, want: []Filtered{}},
		{name: "disabled", requires: `{"bins":["gh"]}`, config: `{"skills":{"entries":{"s":{"enabled":false}}}}`, hosts: fleet, want: []Filtered{}},
		{name: "invalid requirements", requires: `{"bins":["gh"],"hostRoles":["gpu"]}`, hosts: fleet, want: []Filtered{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mkSkill("s", tt.requires, t)
			s.Always = tt.always
			got := evaluate(t, s, mkConfig(t, tt.config), tt.hosts)
			if !reflect.DeepEqual(got.Filtered, tt.want) {
				t.Errorf("filtered %+v\nwant     %+v", got.Filtered, tt.want)
			}
			if tt.hostIDs == nil {
				tt.hostIDs = []string{}
			}
			if !reflect.DeepEqual(got.Hosts, tt.hostIDs) {
				t.Errorf("hosts %v, want %v", got.Hosts, tt.hostIDs)
			}
		})
	}
}
