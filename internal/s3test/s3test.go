// Package s3test starts a real S3-compatible server for tests, benchmarks and make chaos: versitygw, a
// gateway that serves a folder as S3, from the pinned binary the Makefile builds into ./bin (or
// $POSTBOX_VERSITYGW).
package s3test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/internal/freeport"
	"github.com/postbox/postbox/internal/testserver"
)

// The credentials of every server this package starts.
const (
	AccessKey = "postbox-test"
	SecretKey = "postbox-test-secret"
	Region    = "us-east-1"
)

// BinaryPath is the versitygw the tests run.
func BinaryPath() string { return testserver.BinaryPath("POSTBOX_VERSITYGW", "versitygw") }

// Server is a running versitygw over a folder of its own.
type Server struct {
	Addr string // host:port of its S3 API
	Dir  string // the folder it serves: one subfolder per bucket, one file per object
	root string // Dir and the objects' metadata beside it
	proc *testserver.Process
	own  bool
}

// Start starts versitygw on a free loopback port over root/data, with the objects' metadata in
// root/meta (root: a new temporary folder when empty, removed by Stop).
func Start(ctx context.Context, root string) (*Server, error) {
	s := &Server{root: root}
	if root == "" {
		d, err := os.MkdirTemp("", "versitygw")
		if err != nil {
			return nil, err
		}
		s.root, s.own = d, true
	}
	s.Dir = filepath.Join(s.root, "data")
	meta := filepath.Join(s.root, "meta")
	for _, d := range []string{s.Dir, meta} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	port, err := freeport.Loopback()
	if err != nil {
		return nil, err
	}
	s.Addr = "127.0.0.1:" + strconv.Itoa(port)
	// --sidecar keeps the objects' metadata in files of their own, so the folder needs no extended
	// attributes (tmpfs and some overlays have none).
	args := []string{"--access", AccessKey, "--secret", SecretKey, "--region", Region,
		"--port", s.Addr, "--quiet", "--health", "/health", "posix", "--sidecar", meta, s.Dir}
	s.proc, err = testserver.Start(ctx, BinaryPath(), args, func() bool {
		resp, err := http.Get("http://" + s.Addr + "/health")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Config is a files configuration for bucket on this server.
func (s *Server) Config(bucket string) files.Config {
	return files.Config{Endpoint: s.Addr, Region: Region, Bucket: bucket, AccessKey: AccessKey, SecretKey: SecretKey, PartSize: 5 << 20}
}

// Stop stops the server, and removes its folder if Start made it.
func (s *Server) Stop() {
	s.proc.Stop()
	if s.own {
		_ = os.RemoveAll(s.root)
	}
}
