package api_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// embeddedElements lists, for each embedded resource of rel in a HAL-XML collection, the names of its
// child elements in order.
func embeddedElements(t *testing.T, body []byte, rel string) [][]string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(body))
	var out [][]string
	depth, item := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err, string(body))
		switch e := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 2 && e.Name.Local == "resource" && len(e.Attr) > 0 && e.Attr[0].Value == rel:
				out, item = append(out, nil), depth
			case item > 0 && depth == item+1:
				out[len(out)-1] = append(out[len(out)-1], e.Name.Local)
			}
		case xml.EndElement:
			if depth == item {
				item = 0
			}
			depth--
		}
	}
}

// Both areas render a held role with one resource; each keeps the fields and the order its interface
// lists: the service-owner area adds RoleDefinitionCode before the links, the user-facing area never
// shows it, and the base role has neither RoleId nor Delegator in either.
func TestRoleResourcesKeepTheirAreasFieldOrder(t *testing.T) {
	delegated := []string{"RoleId", "RoleType", "RoleDefinitionId", "RoleName", "RoleDescription", "Delegator", "DelegatedTime"}
	base := []string{"RoleType", "RoleDefinitionId", "RoleName", "RoleDescription", "DelegatedTime"}
	with := func(fields []string, extra ...string) []string {
		return append(append(append([]string{}, fields...), extra...), "link")
	}
	for _, mt := range []string{"application/xml", "application/hal+xml"} {
		t.Run(mt, func(t *testing.T) {
			r := get(t, shared, "/api/"+orgO1+"/authorization/roles", append(bearer(t, ssnP3), "Accept", mt)...)
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			assert.Equal(t, [][]string{with(delegated), with(delegated)}, embeddedElements(t, r.Body.Bytes(), "roles"))

			r = get(t, shared, "/api/my/authorization/roles", append(bearer(t, ssnP1), "Accept", mt)...)
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			assert.Equal(t, [][]string{with(base)}, embeddedElements(t, r.Body.Bytes(), "roles"))

			so := fjeToken(t)
			r = so.get(t, shared, "/api/serviceowner/authorization/roles?subject="+ssnP3+"&reportee="+orgO1, "Accept", mt)
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			assert.Equal(t, [][]string{with(delegated, "RoleDefinitionCode")}, embeddedElements(t, r.Body.Bytes(), "roles"))

			r = so.get(t, shared, "/api/serviceowner/authorization/roles?subject="+ssnP1+"&reportee="+ssnP1, "Accept", mt)
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			assert.Equal(t, [][]string{with(base, "RoleDefinitionCode")}, embeddedElements(t, r.Body.Bytes(), "roles"))
		})
	}
}

// The base role has no RoleId: the user-facing area filters on it as null, the service-owner area as 0,
// the key its continuation tokens start from.
func TestBaseRoleIdInFilters(t *testing.T) {
	roles := func(r response) []map[string]any {
		t.Helper()
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		return r.embedded(t, "roles")
	}
	filter := func(f string) string { return "$filter=" + url.QueryEscape(f) }
	assert.Len(t, roles(getAs(t, shared, ssnP1, "/api/my/authorization/roles?"+filter("RoleId eq null"))), 1)
	assert.Empty(t, roles(getAs(t, shared, ssnP1, "/api/my/authorization/roles?"+filter("RoleId eq 0"))))

	so := fjeToken(t)
	path := "/api/serviceowner/authorization/roles?subject=" + ssnP1 + "&reportee=" + ssnP1 + "&"
	assert.Len(t, roles(so.get(t, shared, path+filter("RoleId eq 0"))), 1)
	assert.Empty(t, roles(so.get(t, shared, path+filter("RoleId eq null"))))
}
