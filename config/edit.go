package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// Edit changes a config file's text in place, for the commands that write
// the operator's decisions (skillgate governance approve|suppress|hold):
// comments, whitespace and the order of everything it does not touch stay
// as they are. A new member or element is indented like its siblings (a
// comment after the last one stays with it), and new values are written
// on one line, JSON with a space after each colon and comma.
type Edit struct{ v hujson.Value }

// NewEdit parses a config file's text for editing.
func NewEdit(data []byte) (*Edit, error) {
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, err
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("the config must be one JSON object")
	}
	return &Edit{v: v}, nil
}

// Bytes returns the edited text.
func (e *Edit) Bytes() []byte { return e.v.Pack() }

// Get returns the value at path, decoded as encoding/json decodes into
// any, and whether it is there.
func (e *Edit) Get(path ...string) (any, bool) {
	at := e.find(path)
	if at == nil {
		return nil, false
	}
	c := at.Clone()
	c.Standardize()
	var out any
	if json.Unmarshal(c.Pack(), &out) != nil {
		return nil, false
	}
	return out, true
}

// Set sets the value at path, making the objects on the way; something
// other than an object on the way is an error.
func (e *Edit) Set(value any, path ...string) error {
	nv, err := newValue(value)
	if err != nil {
		return err
	}
	obj, err := e.object(path[:len(path)-1])
	if err != nil {
		return err
	}
	key := path[len(path)-1]
	for i := range obj.Members {
		if obj.Members[i].Name.Value.(hujson.Literal).String() == key {
			obj.Members[i].Value.Value = nv.Value // its comments stay
			return nil
		}
	}
	name := hujson.Value{Value: hujson.String(key)}
	nv.BeforeExtra = hujson.Extra(" ")
	trailing := len(obj.Members) > 0 && obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
	var prev *hujson.Extra
	if n := len(obj.Members); n > 0 {
		prev = &obj.Members[n-1].Name.BeforeExtra
	}
	name.BeforeExtra, obj.AfterExtra = place(prev, obj.AfterExtra)
	if trailing {
		nv.AfterExtra = hujson.Extra{}
	}
	obj.Members = append(obj.Members, hujson.ObjectMember{Name: name, Value: nv})
	return nil
}

// Append appends value to the list at path, making it (and the objects on
// the way) when absent.
func (e *Edit) Append(value any, path ...string) error {
	at := e.find(path)
	if at == nil {
		return e.Set([]any{value}, path...)
	}
	arr, ok := at.Value.(*hujson.Array)
	if !ok {
		return fmt.Errorf("%s is not a list", strings.Join(path, "."))
	}
	nv, err := newValue(value)
	if err != nil {
		return err
	}
	trailing := len(arr.Elements) > 0 && arr.Elements[len(arr.Elements)-1].AfterExtra != nil
	var prev *hujson.Extra
	if n := len(arr.Elements); n > 0 {
		prev = &arr.Elements[n-1].BeforeExtra
	}
	nv.BeforeExtra, arr.AfterExtra = place(prev, arr.AfterExtra)
	if trailing {
		nv.AfterExtra = hujson.Extra{}
	}
	arr.Elements = append(arr.Elements, nv)
	return nil
}

// place returns the whitespace before a member or element appended after
// the one whose leading whitespace is prev (nil: none), and what stays
// before the closing brace or bracket (closing, today). On separate lines
// it takes the line of the last one's indentation, and the comments after
// the last one stay before the new one; on one line, a space.
func place(prev *hujson.Extra, closing hujson.Extra) (before, after hujson.Extra) {
	if prev == nil || !bytes.Contains(*prev, []byte("\n")) {
		if prev == nil {
			return nil, closing
		}
		return hujson.Extra(" "), closing
	}
	indent := (*prev)[bytes.LastIndexByte(*prev, '\n'):] // "\n" and the indentation
	nl := bytes.LastIndexByte(closing, '\n')
	if nl < 0 {
		return append(hujson.Extra(nil), indent...), closing
	}
	before = append(append(hujson.Extra(nil), closing[:nl]...), indent...)
	return before, append(hujson.Extra(nil), closing[nl:]...)
}

// object returns the object at path, making it (and the objects on the
// way) when absent.
func (e *Edit) object(path []string) (*hujson.Object, error) {
	for i := 0; i <= len(path); i++ {
		at := e.find(path[:i])
		if at == nil {
			if err := e.Set(map[string]any{}, path[:i]...); err != nil {
				return nil, err
			}
			at = e.find(path[:i])
		}
		if _, ok := at.Value.(*hujson.Object); !ok {
			c := at.Clone()
			c.Standardize()
			var v any
			json.Unmarshal(c.Pack(), &v)
			return nil, fmt.Errorf("%s is %s, not an object", strings.Join(path[:i], "."), describe(v))
		}
	}
	return e.find(path).Value.(*hujson.Object), nil
}

// find returns the value at path, or nil.
func (e *Edit) find(path []string) *hujson.Value {
	var b strings.Builder
	for _, k := range path {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(k))
	}
	return e.v.Find(b.String())
}

// newValue is value as HuJSON on one line: a space after each colon and
// comma.
func newValue(value any) (hujson.Value, error) {
	js, err := json.Marshal(value)
	if err != nil {
		return hujson.Value{}, err
	}
	v, err := hujson.Parse(js)
	if err != nil {
		return hujson.Value{}, err
	}
	for x := range v.All() {
		switch c := x.Value.(type) {
		case *hujson.Object:
			for i := range c.Members {
				if i > 0 {
					c.Members[i].Name.BeforeExtra = hujson.Extra(" ")
				}
				c.Members[i].Value.BeforeExtra = hujson.Extra(" ")
			}
		case *hujson.Array:
			for i := range c.Elements {
				if i > 0 {
					c.Elements[i].BeforeExtra = hujson.Extra(" ")
				}
			}
		}
	}
	return v, nil
}
