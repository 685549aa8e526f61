package xsd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const demoDir = "../../deploy/demo/"

// demo is the part of deploy/demo/demo.json these tests use.
type demo struct {
	Services []struct {
		FormsMetaData []struct {
			DataFormatID      string
			DataFormatVersion int
			XsdFile           string
		}
	}
	Messages []struct {
		MessageID string
		Subject   string
		Forms     []struct {
			Type              string
			DataFormatID      string
			DataFormatVersion int
			FormData          string
		}
	}
}

var loadDemo = sync.OnceValues(func() (demo, error) {
	var d demo
	b, err := os.ReadFile(demoDir + "demo.json")
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	return d, err
})

func demoData(tb testing.TB) demo {
	tb.Helper()
	d, err := loadDemo()
	require.NoError(tb, err)
	return d
}

// demoLoader resolves "DataFormatID/DataFormatVersion" through the services'
// form metadata, as the service does.
func demoLoader(_ context.Context, key string) ([]byte, error) {
	d, err := loadDemo()
	if err != nil {
		return nil, err
	}
	for _, s := range d.Services {
		for _, f := range s.FormsMetaData {
			if fmt.Sprintf("%s/%d", f.DataFormatID, f.DataFormatVersion) == key {
				return os.ReadFile(demoDir + f.XsdFile)
			}
		}
	}
	return nil, fmt.Errorf("no schema for %s", key)
}

func compileDemo(tb testing.TB, key string, lim Limits) *Schema {
	tb.Helper()
	text, err := demoLoader(context.Background(), key)
	require.NoError(tb, err)
	s, err := Compile(text, lim)
	require.NoError(tb, err)
	tb.Cleanup(s.Close)
	return s
}

// formData returns the FormData of the first form of a message with the
// given data format.
func formData(tb testing.TB, messageID, format string) string {
	tb.Helper()
	for _, m := range demoData(tb).Messages {
		for _, f := range m.Forms {
			if (messageID == "" || m.MessageID == messageID) &&
				fmt.Sprintf("%s/%d", f.DataFormatID, f.DataFormatVersion) == format {
				return f.FormData
			}
		}
	}
	tb.Fatalf("no %s form in message %q", format, messageID)
	return ""
}

const skjema = "3106/21845"

func TestDemoFormsValidateAsMarked(t *testing.T) {
	cache := NewCache(demoLoader, Limits{})
	defer cache.Close()
	formats := map[string]bool{}
	invalid := 0
	for _, m := range demoData(t).Messages {
		for i, f := range m.Forms {
			key := fmt.Sprintf("%s/%d", f.DataFormatID, f.DataFormatVersion)
			formats[key] = true
			wantValid := !strings.HasSuffix(m.Subject, "(utkast med feil)")
			if !wantValid {
				invalid++
			}
			t.Run(fmt.Sprintf("%s/%d", m.MessageID, i), func(t *testing.T) {
				s, err := cache.Get(context.Background(), key)
				require.NoError(t, err)
				res, err := s.Validate([]byte(f.FormData))
				require.NoError(t, err)
				assert.Equal(t, wantValid, res.Valid(), "%+v", res.Errors)
				assert.Empty(t, res.Warnings)
			})
		}
	}
	assert.Len(t, formats, 5, "every demo schema is exercised")
	assert.Equal(t, 1, invalid)
}

func TestInvalidFormReportsElementPaths(t *testing.T) {
	s := compileDemo(t, skjema, Limits{})
	res, err := s.Validate([]byte(formData(t, "a3101221", skjema)))
	require.NoError(t, err)
	assert.Equal(t, []Issue{
		{
			FieldName:    "AntallAnsatte",
			ErrorMessage: "Element 'AntallAnsatte': [facet 'maxInclusive'] The value '250000' is greater than the maximum value allowed ('99999').",
			FieldXPath:   "/Skjema/AntallAnsatte",
			Line:         12,
		},
		{
			FieldName:    "Naeringstype",
			ErrorMessage: "Element 'Naeringstype': [facet 'enumeration'] The value 'FISKE' is not an element of the set {'IND', 'HAN', 'TJE', 'PRI', 'BYG'}.",
			FieldXPath:   "/Skjema/Naeringstype",
			Line:         13,
		},
	}, res.Errors)
	assert.Empty(t, res.Warnings)
	assert.False(t, res.Valid())
}

func TestSchemaViolations(t *testing.T) {
	valid := formData(t, "a3101102", skjema)
	budget := formData(t, "", "5571/41234")
	tests := []struct {
		name, format, doc       string
		wantName, wantPath, msg string
	}{
		{"wrong root element", skjema, `<Foo/>`,
			"Foo", "/Foo", "No matching global declaration available for the validation root"},
		{"missing element", skjema, strings.Replace(valid, "<HarRevisor>true</HarRevisor>", "", 1),
			"Fristdato", "/Skjema/Fristdato", "This element is not expected. Expected is ( HarRevisor )"},
		{"wrong fixed attribute", skjema, strings.Replace(valid, `dataFormatVersion="21845"`, `dataFormatVersion="21201"`, 1),
			"Skjema", "/Skjema", "does not match the fixed value constraint '21845'"},
		{"pattern in nested element", skjema, strings.Replace(valid, "+4740000001", "call me", 1),
			"Telefon", "/Skjema/Kontaktperson/Telefon", "[facet 'pattern']"},
		{"repeated element gets an index", "5571/41234", replaceNth(budget, "<Belop>", "<Belop>-", 2),
			"Belop", "/Skjema/Budsjettpost[2]/Belop", "[facet 'minInclusive']"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := compileDemo(t, tt.format, Limits{}).Validate([]byte(tt.doc))
			require.NoError(t, err)
			require.Len(t, res.Errors, 1, "%+v", res.Errors)
			assert.Equal(t, tt.wantName, res.Errors[0].FieldName)
			assert.Equal(t, tt.wantPath, res.Errors[0].FieldXPath)
			assert.Contains(t, res.Errors[0].ErrorMessage, tt.msg)
		})
	}
}

// replaceNth replaces the n-th (1-based) occurrence of old.
func replaceNth(s, old, new string, n int) string {
	i := -1
	for ; n > 0; n-- {
		i += 1 + strings.Index(s[i+1:], old)
	}
	return s[:i] + new + s[i+len(old):]
}

func nested(depth int) string {
	return strings.Repeat("<a>", depth) + strings.Repeat("</a>", depth)
}

const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<Skjema>&lol9;</Skjema>`

func TestRejectedDocuments(t *testing.T) {
	valid := formData(t, "a3101102", skjema)
	attrs := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, ` a%d="%d"`, i, i)
		}
		return b.String()
	}
	// 65 namespaces in scope, 13 per element.
	var ns strings.Builder
	for d := range 5 {
		ns.WriteString("<a")
		for k := range 13 {
			fmt.Fprintf(&ns, ` xmlns:p%d_%d="urn:x"`, d, k)
		}
		ns.WriteString(">")
	}
	tests := []struct {
		name string
		lim  Limits
		doc  string
		msg  string
		line int
	}{
		{"empty", Limits{}, "", "document is empty", 0},
		{"not XML", Limits{}, "hello", "Start tag expected, '<' not found", 1},
		{"malformed", Limits{}, "<Skjema>\n<Innsender>\n</Skjema>", "Opening and ending tag mismatch: Innsender line 2 and Skjema", 3},
		{"invalid UTF-8", Limits{}, "<Skjema>\xff</Skjema>", "Input is not proper UTF-8, indicate encoding ! Bytes: 0xFF 0x3C 0x2F 0x53", 1},
		{"UTF-7 cannot hide markup", Limits{}, `<?xml version="1.0" encoding="UTF-7"?>+ADw-Skjema/+AD4-`, "Start tag expected, '<' not found", 1},
		{"UTF-16", Limits{}, "\xff\xfe<\x00S\x00/\x00>\x00", "Start tag expected, '<' not found", 1},
		{"undefined entity", Limits{}, "<Skjema>&lol;</Skjema>", "Entity 'lol' not defined", 1},
		{"billion laughs", Limits{}, billionLaughs, "DOCTYPE is not allowed", 2},
		{"external entity", Limits{}, `<!DOCTYPE Skjema [<!ENTITY e SYSTEM "file:///etc/passwd">]><Skjema>&e;</Skjema>`, "DOCTYPE is not allowed", 1},
		{"external DTD", Limits{}, `<!DOCTYPE Skjema SYSTEM "http://127.0.0.1:9/x.dtd"><Skjema/>`, "DOCTYPE is not allowed", 1},
		{"too large", Limits{}, valid + strings.Repeat(" ", 10<<20-len(valid)+1), "document is 10485761 bytes, larger than the limit of 10485760 bytes", 0},
		{"too large for a custom limit", Limits{MaxBytes: 100}, valid[:101], "document is 101 bytes, larger than the limit of 100 bytes", 0},
		{"too deep", Limits{}, nested(257), "element nesting exceeds the limit of 256 levels", 1},
		{"too deep for a custom limit", Limits{MaxDepth: 3}, "<Skjema>\n" + nested(3) + "</Skjema>", "element nesting exceeds the limit of 3 levels", 2},
		{"too many attributes", Limits{}, "<Skjema>\n<a" + attrs(65) + "/></Skjema>", "element has more than 64 attributes", 2},
		{"too many namespaces", Limits{}, ns.String(), "more than 64 namespace declarations in scope", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := compileDemo(t, skjema, tt.lim)
			res, err := s.Validate([]byte(tt.doc))
			require.NoError(t, err)
			require.NotEmpty(t, res.Errors)
			assert.Equal(t, tt.msg, res.Errors[0].ErrorMessage)
			assert.Equal(t, tt.line, res.Errors[0].Line)
			assert.Empty(t, res.Errors[0].FieldXPath)
			assert.NotContains(t, fmt.Sprint(res), "root:", "no file contents leak")
		})
	}
}

func TestDocumentsAtTheLimitsAreParsed(t *testing.T) {
	valid := formData(t, "a3101102", skjema)
	res, err := compileDemo(t, skjema, Limits{MaxBytes: len(valid)}).Validate([]byte(valid))
	require.NoError(t, err)
	assert.True(t, res.Valid(), "%+v", res.Errors)

	// 256 levels and 64 attributes get through parsing; the schema then
	// reports the unknown root.
	var attrs strings.Builder
	for i := range 64 {
		fmt.Fprintf(&attrs, ` a%d="="`, i)
	}
	for _, doc := range []string{nested(256), "<a" + attrs.String() + "/>"} {
		res, err := compileDemo(t, skjema, Limits{}).Validate([]byte(doc))
		require.NoError(t, err)
		require.Len(t, res.Errors, 1)
		assert.Equal(t, "/a", res.Errors[0].FieldXPath)
		assert.Contains(t, res.Errors[0].ErrorMessage, "No matching global declaration")
	}
}

func TestDocumentsAreReadAsUTF8(t *testing.T) {
	// 175 "ø" fit Tekst175 only if read as UTF-8; as Latin-1 they would be 350.
	doc := `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n" +
		strings.Replace(formData(t, "a3101102", skjema), "Ingrid Fjellheim", strings.Repeat("ø", 175), 1)
	res, err := compileDemo(t, skjema, Limits{}).Validate([]byte(doc))
	require.NoError(t, err)
	assert.True(t, res.Valid(), "%+v", res.Errors)
}

func TestWarningsDoNotInvalidate(t *testing.T) {
	s := compileDemo(t, skjema, Limits{})
	res, err := s.Validate([]byte(`<?xml version="1.1"?>` + "\n" + formData(t, "a3101102", skjema)))
	require.NoError(t, err)
	assert.True(t, res.Valid(), "%+v", res.Errors)
	assert.Equal(t, []Issue{{ErrorMessage: "Unsupported version '1.1'", Line: 1}}, res.Warnings)
}

func TestIssuesAreCapped(t *testing.T) {
	// 64 unknown attributes on each of two elements: 128 errors.
	var attrs strings.Builder
	for i := range 64 {
		fmt.Fprintf(&attrs, ` x%d=""`, i)
	}
	doc := strings.Replace(formData(t, "a3101102", skjema), "<Innsender>", "<Innsender"+attrs.String()+">", 1)
	doc = strings.Replace(doc, "<Kontaktperson>", "<Kontaktperson"+attrs.String()+">", 1)
	res, err := compileDemo(t, skjema, Limits{}).Validate([]byte(doc))
	require.NoError(t, err)
	require.Len(t, res.Errors, maxIssues+1)
	assert.Equal(t, "/Skjema/Innsender", res.Errors[0].FieldXPath)
	assert.Equal(t, "/Skjema/Kontaktperson", res.Errors[maxIssues-1].FieldXPath)
	assert.Equal(t, "28 more errors not reported", res.Errors[maxIssues].ErrorMessage)
}

func TestConcurrentValidation(t *testing.T) {
	s := compileDemo(t, skjema, Limits{})
	docs := []string{
		formData(t, "a3101102", skjema),
		formData(t, "a3101221", skjema),
		billionLaughs,
		"<Skjema>\n<Innsender>\n</Skjema>",
		nested(300),
	}
	want := make([]Result, len(docs))
	for i, d := range docs {
		var err error
		want[i], err = s.Validate([]byte(d))
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 50 {
				k := (g + i) % len(docs)
				got, err := s.Validate([]byte(docs[k]))
				assert.NoError(t, err)
				assert.Equal(t, want[k], got)
			}
		})
	}
	wg.Wait()
}

func TestCacheCompilesOnce(t *testing.T) {
	var loads atomic.Int32
	release := make(chan struct{})
	cache := NewCache(func(ctx context.Context, key string) ([]byte, error) {
		loads.Add(1)
		<-release // hold the first load so that the other Gets must wait
		return demoLoader(ctx, key)
	}, Limits{})
	defer cache.Close()

	got := make([]*Schema, 20)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			var err error
			got[i], err = cache.Get(context.Background(), skjema)
			assert.NoError(t, err)
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(1), loads.Load())
	for _, s := range got {
		assert.Same(t, got[0], s)
	}

	other, err := cache.Get(context.Background(), "4422/38190")
	require.NoError(t, err)
	assert.NotSame(t, got[0], other)
	assert.Equal(t, int32(2), loads.Load())
}

func TestCacheDoesNotKeepFailures(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	cache := NewCache(func(ctx context.Context, key string) ([]byte, error) {
		if fail.Load() {
			return nil, errors.New("metadata store unavailable")
		}
		return demoLoader(ctx, key)
	}, Limits{})
	_, err := cache.Get(context.Background(), skjema)
	require.ErrorContains(t, err, "metadata store unavailable")

	fail.Store(false)
	s, err := cache.Get(context.Background(), skjema)
	require.NoError(t, err)
	_, err = cache.Get(context.Background(), "0000/1")
	require.ErrorContains(t, err, "no schema for 0000/1")

	cache.Close()
	_, err = cache.Get(context.Background(), skjema)
	require.ErrorIs(t, err, ErrClosed)
	_, err = s.Validate([]byte(formData(t, "a3101102", skjema)))
	require.ErrorIs(t, err, ErrClosed, "Close freed the cached schemas")
}

func TestCacheWaiterHonoursContext(t *testing.T) {
	release := make(chan struct{})
	cache := NewCache(func(ctx context.Context, key string) ([]byte, error) {
		<-release
		return demoLoader(ctx, key)
	}, Limits{})
	defer cache.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := cache.Get(context.Background(), skjema)
		assert.NoError(t, err)
	})
	defer wg.Wait()
	defer close(release)
	for { // wait until the first Get holds the entry
		cache.mu.Lock()
		_, loading := cache.entries[skjema]
		cache.mu.Unlock()
		if loading {
			break
		}
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := cache.Get(ctx, skjema)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestCompileErrors(t *testing.T) {
	const xs = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">`
	tests := []struct{ name, xsd, msg string }{
		{"empty", "", "document is empty"},
		{"not well-formed", "<xs:schema", "Couldn't find end of Start Tag schema"},
		{"unknown type", xs + `<xs:element name="a" type="nope"/></xs:schema>`,
			"line 1: element decl. 'a', attribute 'type': The QName value 'nope' does not resolve to a(n) type definition."},
		{"include of a local file", xs + `<xs:include schemaLocation="file:///etc/passwd"/></xs:schema>`,
			"Failed to parse the XML resource 'file:///etc/passwd'"},
		{"import over the network", xs + `<xs:import namespace="urn:x" schemaLocation="http://127.0.0.1:9/x.xsd"/></xs:schema>`,
			"Failed to parse the XML resource 'http://127.0.0.1:9/x.xsd'"},
		{"DOCTYPE", `<!DOCTYPE x SYSTEM "file:///etc/passwd">` + xs + `</xs:schema>`, "DOCTYPE is not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([]byte(tt.xsd), Limits{})
			require.ErrorContains(t, err, tt.msg)
			assert.Nil(t, s)
			assert.NotContains(t, err.Error(), "root:")
		})
	}
}

func TestClosedSchema(t *testing.T) {
	s := compileDemo(t, skjema, Limits{})
	s.Close()
	s.Close()
	_, err := s.Validate([]byte("<Skjema/>"))
	require.ErrorIs(t, err, ErrClosed)
}

func TestCrowdedTag(t *testing.T) {
	many := func(n int, attr string) string { return strings.Repeat(attr, n) }
	tests := []struct {
		name, doc string
		want      int
	}{
		{"64 attributes", "<a" + many(64, ` b=""`) + ">", -1},
		{"65 attributes", "<r>\n<a" + many(65, ` b=""`) + ">", 4},
		{"'=' in values", "<a" + many(64, ` b="=='=>"`) + ">", -1},
		{"'>' in a value does not end the tag", `<x a=">"` + many(65, " b=''") + ">", 0},
		{"'<' in a value ends the tag", `<x a="<"` + many(65, " b=''") + ">", -1},
		{"comment", "<!--" + many(70, ` b=""`) + "--><a/>", -1},
		{"CDATA", "<a><![CDATA[<b" + many(70, ` b=""`) + "]]></a>", -1},
		{"processing instruction", "<?pi" + many(70, ` b=""`) + "?><a/>", -1},
		{"end tag", "</a" + many(70, ` b=""`) + ">", -1},
		{"unterminated comment", "<!--" + many(70, ` b=""`), -1},
		{"unterminated value", "<a b='" + many(70, ` b=""`), -1},
		{"text", many(70, `b="" `), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, crowdedTag([]byte(tt.doc)))
		})
	}
}
