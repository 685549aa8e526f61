package openapi_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api/openapi"
)

type base struct {
	ID   string `json:"Id"`
	Name string
}

type sample struct {
	base
	Count  int
	Note   string `json:",omitempty"`
	Maybe  *int
	Hidden string `json:"-"`
	//lint:ignore U1000 an unexported field the reflector must pass over
	internal string
	Tags     []string          `json:"tags"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	When     time.Time
	Raw      json.RawMessage
	Child    *sample `json:",omitempty"`
	Digits   int     `json:",string"`
}

type ownJSON struct{}

func (ownJSON) MarshalJSON() ([]byte, error) { return []byte("1"), nil }

func TestReflectorFollowsEncodingJSON(t *testing.T) {
	r := openapi.NewReflector()
	assert.Equal(t, "#/components/schemas/Sample", r.Of(sample{}).Ref)
	s := r.Schemas["Sample"]
	require.NotNil(t, s)

	assert.Equal(t, false, s.AdditionalProperties, "no property the type does not have")
	assert.ElementsMatch(t, []string{"Id", "Name", "Count", "Note", "Maybe", "tags", "attrs", "When", "Raw", "Child", "Digits"}, keys(s.Properties),
		"the embedded struct's fields promoted, json names, no '-' or unexported field")
	assert.ElementsMatch(t, []string{"Id", "Name", "Count", "Maybe", "tags", "When", "Raw", "Digits"}, s.Required, "required unless omitempty")
	assert.Equal(t, []string{"integer", "null"}, s.Properties["Maybe"].Type, "a pointer without omitempty may be null")
	assert.Equal(t, "#/components/schemas/Sample", s.Properties["Child"].Ref, "a type may refer to itself")
	assert.Equal(t, "array", s.Properties["tags"].Type)
	assert.Equal(t, "string", s.Properties["attrs"].AdditionalProperties.(*openapi.Schema).Type)
	assert.Equal(t, "date-time", s.Properties["When"].Format)
	assert.Equal(t, &openapi.Schema{}, s.Properties["Raw"], "any JSON")
	assert.Equal(t, "string", s.Properties["Digits"].Type, ",string writes the number as a string")

	assert.Panics(t, func() { r.Of(ownJSON{}) }, "a type that writes its own JSON needs an Override")
	r.Override(reflect.TypeFor[ownJSON](), func() *openapi.Schema { return &openapi.Schema{Type: "integer"} })
	assert.Equal(t, "integer", r.Of(ownJSON{}).Type)
}

func TestNullableRefIsOneOf(t *testing.T) {
	n := openapi.Nullable(openapi.Ref("X"))
	require.Len(t, n.OneOf, 2)
	assert.Equal(t, "null", n.OneOf[1].Type)
}

func keys(m map[string]*openapi.Schema) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
