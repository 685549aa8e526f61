package problem_test

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/postbox/postbox/api/problem"
)

// problemMade finds the problems the code makes: problem.New(http.StatusX, "kind", …) and the
// {http.StatusX, "kind"} entries of the form-task mapping.
var problemMade = regexp.MustCompile(`(?:New\(|\{)http\.Status(\w+), "([a-z-]+)"`)

// TestEveryProblemTypeIsListed: a problem the code can answer with is in Types with its status, so the
// OpenAPI document lists it (and the suite's responses validate).
func TestEveryProblemTypeIsListed(t *testing.T) {
	statusOf := map[string]int{}
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			statusOf[strings.NewReplacer(" ", "", "-", "", "'", "").Replace(text)] = code
		}
	}
	listed := map[string]int{}
	for _, ty := range problem.Types {
		if _, dup := listed[ty.Kind]; dup {
			t.Errorf("problem type %s is listed twice", ty.Kind)
		}
		listed[ty.Kind] = ty.Status
	}
	found := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range problemMade.FindAllStringSubmatch(string(src), -1) {
			found++
			status, ok := statusOf[m[1]]
			if !ok {
				t.Errorf("%s: http.Status%s is no status this test knows", path, m[1])
				continue
			}
			if got, ok := listed[m[2]]; !ok || got != status {
				t.Errorf("%s makes the problem %q with status %d: list it in api/problem/types.go as {%q, http.Status%s, \"<what it means, what the client can do>\"}",
					path, m[2], status, m[2], m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 20 {
		t.Fatalf("found only %d problems in the code: the pattern no longer matches how they are made", found)
	}
}
