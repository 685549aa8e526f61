// Driving and measuring: the generators (wrk, vegeta), the bare loop, and what the API process and this one
// spent, from /metrics and /proc.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/postbox/postbox/internal/loadtest"
)

type result struct {
	rate     float64
	p50, p99 time.Duration
	requests uint64 // of the API
	calls    int    // of the bare statement
}

// attack drives url with clients concurrent vegeta workers, as fast as they go, for d.
func attack(target, token string, clients int, d time.Duration) (result, error) {
	header := http.Header{"Apikey": {demoMailboxKey}, "Authorization": {"Bearer " + token}, "Accept": {"application/hal+json"}}
	targeter := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: target, Header: header})
	// MaxBody(0): every body is read to its end but not kept (nothing looks at it): copying it into a
	// buffer would be CPU on the cores the API and PostgreSQL use, which the bare loop does not spend.
	attacker := vegeta.NewAttacker(vegeta.Workers(uint64(clients)), vegeta.MaxWorkers(uint64(clients)), vegeta.KeepAlive(true),
		vegeta.Connections(clients), vegeta.Timeout(30*time.Second), vegeta.MaxBody(0))
	var m vegeta.Metrics
	for res := range attacker.Attack(targeter, vegeta.Rate{Freq: 0}, d, "bench") {
		m.Add(res)
	}
	m.Close()
	if m.Success < 1 {
		return result{}, fmt.Errorf("%.1f%% of requests failed: %v (status codes %v)", 100*(1-m.Success), m.Errors, m.StatusCodes)
	}
	return result{rate: m.Throughput, p50: m.Latencies.P50, p99: m.Latencies.P99, requests: m.Requests}, nil
}

// wrkScript gives wrk the API's headers and, when the run is done, its figures on one line: requests,
// their duration, latency p50 and p99 in microseconds, and the requests that failed (sockets, status codes
// outside 2xx and 3xx, timeouts). wrk measures each request from its send to its last byte on a connection
// that sends the next one only then, as vegeta's workers do at an unlimited rate.
const wrkScript = `
wrk.method = "GET"
wrk.headers["ApiKey"] = os.getenv("BENCH_APIKEY")
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
wrk.headers["Accept"] = "application/hal+json"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("benchload %d %d %d %d %d\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), e.connect + e.read + e.write + e.status + e.timeout))
end
`

// wrk drives target with wrk (the Debian package) over clients connections from one thread per core, as
// fast as they go, for d; genCPU is wrk's own CPU time.
func wrk(ctx context.Context, target, token string, clients int, d time.Duration) (r result, genCPU time.Duration, err error) {
	script, err := os.CreateTemp("", "benchload-*.lua")
	if err != nil {
		return r, 0, err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(wrkScript); err != nil {
		script.Close()
		return r, 0, err
	}
	if err := script.Close(); err != nil {
		return r, 0, err
	}
	threads := min(clients, runtime.NumCPU())
	cmd := exec.CommandContext(ctx, "wrk", "--threads", strconv.Itoa(threads), "--connections", strconv.Itoa(clients),
		"--duration", fmt.Sprintf("%ds", max(1, int(d.Seconds()))), "--timeout", "30s", "--script", script.Name(), target)
	cmd.Env = append(os.Environ(), "BENCH_APIKEY="+demoMailboxKey, "BENCH_TOKEN="+token)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) {
		return r, 0, errors.New("wrk is not installed (scripts/deps.sh wrk, or --generator vegeta)")
	}
	if err != nil {
		return r, 0, fmt.Errorf("wrk: %w", err)
	}
	genCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	for _, line := range strings.Split(string(out), "\n") {
		var requests, micros, p50, p99, failed int64
		if n, _ := fmt.Sscanf(line, "benchload %d %d %d %d %d", &requests, &micros, &p50, &p99, &failed); n != 5 {
			continue
		}
		if failed > 0 || requests == 0 {
			return r, genCPU, fmt.Errorf("%d of %d requests failed:\n%s", failed, requests, out)
		}
		return result{rate: float64(requests) / (float64(micros) / 1e6), p50: time.Duration(p50) * time.Microsecond,
			p99: time.Duration(p99) * time.Microsecond, requests: uint64(requests)}, genCPU, nil
	}
	return r, genCPU, fmt.Errorf("wrk printed no figures:\n%s", out)
}

// hammer runs query from clients goroutines, back to back, for d.
func hammer(ctx context.Context, pool *pgxpool.Pool, query func(context.Context, *pgxpool.Pool) error, clients int, d time.Duration) (result, error) {
	r, err := loadtest.Run(clients, 0, d, func() error { return query(ctx, pool) })
	return result{rate: r.Rate, p50: r.P50, p99: r.P99, calls: r.Calls}, err
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitHealthy(base string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := http.Get(base + "/healthz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("the API did not become healthy within 30s")
}

// apiMetric is the value of one unlabelled metric on the API's /metrics.
func apiMetric(admin, name string) (float64, error) {
	v, err := apiMetrics(admin, name)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// apiMetrics are the values of unlabelled metrics on the API's /metrics, read at once.
func apiMetrics(admin string, names ...string) ([]float64, error) {
	r, err := http.Get(admin + "/metrics")
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	values := make([]float64, len(names))
	for i, name := range names {
		found := false
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				if values[i], err = strconv.ParseFloat(v, 64); err != nil {
					return nil, err
				}
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("the API's /metrics has no %s", name)
		}
	}
	return values, nil
}

// saveProfile records the API's profile of kind (profile: CPU, allocs: the allocations) for d
// (POSTBOX_ADMIN_PPROF) into file.
func saveProfile(admin, kind, file string, d time.Duration) error {
	r, err := http.Get(fmt.Sprintf("%s/debug/pprof/%s?seconds=%d", admin, kind, max(1, int(d.Seconds()))))
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		return fmt.Errorf("%s profile: %s", kind, r.Status)
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r.Body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// slug is an endpoint's name as part of a file name: "one party, $filter" → "one-party-filter".
func slug(name string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	}), "-")
}

// processCPU is the CPU time (user and system) the process has used so far, from /proc in clock ticks of
// 10 ms (USER_HZ is 100 on Linux).
func processCPU(pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command (in parentheses, which may hold spaces): utime and stime are the 12th and 13th.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// ownCPU is the CPU time this process (vegeta, or the bare loop's pgx client) has used so far.
func ownCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// perCall is a CPU time spread over n calls, in microseconds.
func perCall[N int | uint64](cpu time.Duration, n N) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0fµs", float64(cpu.Microseconds())/float64(n))
}

// peakRSS is the process's high-water mark of resident memory (VmHWM), from /proc.
func peakRSS(pid int) string {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
