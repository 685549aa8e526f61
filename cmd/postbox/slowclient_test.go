package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/store/storetest"
)

// slowClientConfig is the configuration of these tests: the POSTBOX_* variables with windows short
// enough for a test.
func slowClientConfig(t *testing.T) config.Config {
	t.Setenv("POSTBOX_PROGRESS_WINDOW", "2s")
	t.Setenv("POSTBOX_PROGRESS_MIN_BYTES", "1024")
	t.Setenv("POSTBOX_IDLE_TIMEOUT", "1s")
	t.Setenv("POSTBOX_MAX_HEADER_BYTES", "4096")
	cfg, err := config.Load()
	require.NoError(t, err)
	return cfg
}

// serveOnTCP serves h with the http.Server `postbox api` builds, on a real listener.
func serveOnTCP(t *testing.T, cfg config.Config, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := newHTTPServer(cfg, ln.Addr().String(), h)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// readAnswer reads one response from the connection.
func readAnswer(t *testing.T, conn net.Conn, r *bufio.Reader) (*http.Response, map[string]any) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	var problem map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&problem))
	}
	return resp, problem
}

// requireClosed reads until the server closes the connection.
func requireClosed(t *testing.T, conn net.Conn, r *bufio.Reader) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server kept the connection open")
}

// Real clients over TCP against the API served as `postbox api` serves it.
func TestSlowClients(t *testing.T) {
	cfg := slowClientConfig(t)
	srv, err := api.New(api.Options{Pool: storetest.New(t), Logger: slog.New(slog.DiscardHandler),
		MaxBodyBytes: cfg.MaxBodyBytes, Limits: clientLimits(cfg)})
	require.NoError(t, err)
	addr := serveOnTCP(t, cfg, srv)
	login := func(conn net.Conn, bodyLength int) {
		_, err := fmt.Fprintf(conn, "POST /api/authentication/authenticatewithpassword HTTP/1.1\r\nHost: postbox.test\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", bodyLength)
		require.NoError(t, err)
	}

	t.Run("a body sent byte by byte is cut with 408", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		login(conn, 1000)
		go func() { // one byte every 100 ms, far below 1024 bytes in 2 s
			for i := 0; i < 1000; i++ {
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		r := bufio.NewReader(conn)
		resp, problem := readAnswer(t, conn, r)
		assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
		assert.Equal(t, "urn:postbox:problem:body-too-slow", problem["type"])
		assert.Contains(t, problem["detail"], "fewer than 1024 bytes in 2s")
		requireClosed(t, conn, r)
	})

	t.Run("a body that keeps pace is read to the end, over several windows", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		body := `{"UserName":"nobody","UserPassword":"x"` + strings.Repeat(" ", 6*1024) + `}`
		login(conn, len(body))
		go func() { // 1.5 KiB every 500 ms: more than 1024 bytes in every 2 s window, 2 s in all
			for rest := body; rest != ""; time.Sleep(500 * time.Millisecond) {
				piece := rest[:min(len(rest), 1536)]
				if _, err := io.WriteString(conn, piece); err != nil {
					return
				}
				rest = rest[len(piece):]
			}
		}()
		resp, problem := readAnswer(t, conn, bufio.NewReader(conn))
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the body arrived and was judged: %v", problem)
	})

	t.Run("an idle keep-alive connection is closed", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: postbox.test\r\n\r\n")
		require.NoError(t, err)
		r := bufio.NewReader(conn)
		resp, _ := readAnswer(t, conn, r)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		requireClosed(t, conn, r)
	})

	t.Run("headers past the limit get a problem", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: postbox.test\r\nX-Padding: "+strings.Repeat("a", 6000)+"\r\n\r\n")
		require.NoError(t, err)
		resp, problem := readAnswer(t, conn, bufio.NewReader(conn))
		assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
		assert.Equal(t, "urn:postbox:problem:headers-too-large", problem["type"])
	})
}

// A client that stops taking a long response is cut off: the write that finds it gone fails and the
// handler ends.
func TestStalledDownloadIsCut(t *testing.T) {
	cfg := slowClientConfig(t)
	writeErr := make(chan error, 1)
	big := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		piece := make([]byte, 64<<10)
		for range 4096 { // 256 MiB, far more than the socket buffers hold
			if _, err := w.Write(piece); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	})
	addr := serveOnTCP(t, cfg, clientLimits(cfg).Wrap(big))
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET /attachment HTTP/1.1\r\nHost: postbox.test\r\n\r\n")
	require.NoError(t, err)
	// The client reads nothing.
	select {
	case err := <-writeErr:
		require.Error(t, err, "the whole response was written to a client that read none of it")
	case <-time.After(60 * time.Second):
		t.Fatal("the stalled download was never cut off")
	}
}

// The windows bound the client, not the handler: once the body is in, a handler that works longer than
// a window (a form task waiting for its workflow) is not cancelled and its answer is delivered.
func TestHandlerMayWorkLongerThanAWindow(t *testing.T) {
	cfg := slowClientConfig(t)
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(cfg.ProgressWindow + time.Second):
		case <-r.Context().Done():
			http.Error(w, "cancelled", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "read %d bytes", len(body))
	})
	addr := serveOnTCP(t, cfg, clientLimits(cfg).Wrap(slow))
	resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader(strings.Repeat("x", 3000)))
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(got))
	assert.Equal(t, "read 3000 bytes", string(got))
}
