// Package testserver runs the servers tests, benchmarks and make chaos need (Mailpit, versitygw, the
// Temporal CLI) from the pinned binaries the Makefile builds into ./bin.
package testserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// BinaryPath is the binary name in the repository's ./bin, or the path the environment variable env gives.
func BinaryPath(env, name string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "bin", name)
}

// Process is a running server.
type Process struct{ cmd *exec.Cmd }

// Start runs the binary at path with args and polls ready until it answers true: for 30 s at most, or
// until ctx ends. The server ends with the process that started it, also when a test binary panics and
// skips its TestMain's clean-up.
func Start(ctx context.Context, path string, args []string, ready func() bool) (*Process, error) {
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (make %s builds it): %w", filepath.Base(path), filepath.Join("bin", filepath.Base(path)), err)
	}
	p := &Process{cmd: cmd}
	deadline := time.Now().Add(30 * time.Second)
	for !ready() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.Stop()
			return nil, fmt.Errorf("%s did not answer", filepath.Base(path))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p, nil
}

// Stop ends the server and waits for it.
func (p *Process) Stop() {
	if p != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}
