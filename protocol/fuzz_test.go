package protocol

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeFrame feeds hostile bytes through everything the gateway runs
// on a frame from the network: it must never panic, and every refusal of
// params must carry a protocol error code.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"req","id":"1","method":"connect","params":{"protocol":1,"token":"t","client":"c","node":{"id":"mac-1","os":"darwin","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}}}`,
		`{"type":"req","id":"2","method":"facts.update","params":{"env":["GITHUB_TOKEN"],"hostBinStatus":{"gh":true,"tmux":false}}}`,
		`{"type":"res","id":"1","ok":true,"payload":{"protocol":1,"interest":{"bins":["gh"],"env":[]}}}`,
		`{"type":"res","ok":false,"error":{"code":"bad_request","message":"x"}}`,
		`{"type":"evt","event":"interest","payload":{"bins":[],"env":[]}}`,
		`{"type":"req","id":"1","method":"connect","params":{"protocol":2}}`,
		`{"type":"req","id":"1","method":"connect","params":{"protocol":1,"node":{"id":"../x","roles":[1]}}}`,
		`{"type":"req","id":"3","method":"facts.update","params":{"env":[""],"hostBinStatus":{"":true}}}`,
		`[]`, `null`, `{"type":1}`, `{"type":"req","id":"","method":"x"}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := DecodeFrame(data)
		if err != nil {
			return
		}
		if _, err := json.Marshal(fr); err != nil {
			t.Fatalf("a decoded frame does not encode: %v", err)
		}
		check := func(err error) {
			var pe *Error
			if err != nil && (!errors.As(err, &pe) || pe.Code == "") {
				t.Fatalf("params error without a protocol code: %v", err)
			}
		}
		switch {
		case fr.Type == TypeReq && fr.Method == MethodConnect:
			p, err := ParseConnectParams(fr.Params)
			check(err)
			if err == nil {
				facts := p.Node.HostFacts()
				if facts.Validate() != nil {
					t.Fatalf("accepted connect params with invalid facts: %+v", p.Node)
				}
			}
		case fr.Type == TypeReq && fr.Method == MethodFactsUpdate:
			u, err := ParseFactsUpdate(fr.Params)
			check(err)
			if err == nil && u.Validate() != nil {
				t.Fatalf("accepted a facts.update that does not validate")
			}
		case fr.Type == TypeRes && fr.Payload != nil:
			_, err := ParseConnectResult(fr.Payload)
			check(err)
		case fr.Type == TypeEvt && fr.Payload != nil:
			_, err := ParseInterest(fr.Payload)
			check(err)
		}
	})
}
