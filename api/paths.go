package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// pathNormalizer lets clients write the literal parts of a path in any case (existing clients send
// /api/my/Messages and /authorization/RoleDefinitions) and end it with an optional slash, without a
// redirect: the request is rewritten to the registered spelling and served where it was sent. Path
// parameters keep their case.
type pathNormalizer struct {
	next      http.Handler
	preflight http.HandlerFunc
	patterns  [][]string // registered routes split into segments; ":x" marks a parameter
}

func newPathNormalizer(engine *gin.Engine, preflight http.HandlerFunc) *pathNormalizer {
	n := &pathNormalizer{next: engine, preflight: preflight}
	seen := map[string]bool{}
	for _, r := range engine.Routes() {
		if !seen[r.Path] {
			seen[r.Path] = true
			n.patterns = append(n.patterns, strings.Split(strings.Trim(r.Path, "/"), "/"))
		}
	}
	return n
}

func (n *pathNormalizer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.URL.Path = n.normalize(r.URL.Path)
	r.URL.RawPath = ""
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		n.preflight(w, r)
		return
	}
	n.next.ServeHTTP(w, r)
}

func (n *pathNormalizer) normalize(path string) string {
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	// Of the patterns this path fits, the one with the most literals wins, as static routes win in gin.
	var best []string
	bestLiterals := -1
	for _, p := range n.patterns {
		if len(p) != len(segs) {
			continue
		}
		literals := 0
		fits := true
		for i, ps := range p {
			if strings.HasPrefix(ps, ":") {
				continue
			}
			if !strings.EqualFold(ps, segs[i]) {
				fits = false
				break
			}
			literals++
		}
		if fits && literals > bestLiterals {
			best, bestLiterals = p, literals
		}
	}
	if best == nil {
		return path
	}
	for i, ps := range best {
		if !strings.HasPrefix(ps, ":") {
			segs[i] = ps
		}
	}
	return "/" + strings.Join(segs, "/")
}
