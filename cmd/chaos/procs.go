package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/postbox/postbox/internal/freeport"
)

// component is a part of the stack the suite crashes and brings back.
type component interface {
	name() string
	// crash ends it without warning: kill -9, or an immediate PostgreSQL shutdown.
	crash() error
	// restart brings it back after a crash.
	restart() error
}

// proc is a process kept running as an orchestrator would: when it exits on its own (e.g. the API
// starting while PostgreSQL is down), it is started again a second later.
type proc struct {
	label string
	path  string
	args  []string
	env   []string
	dir   string
	log   *os.File

	mu      sync.Mutex
	wanted  bool
	cmd     *exec.Cmd
	exited  chan struct{}
	crashes int // exits the suite did not cause
	wake    chan struct{}
}

func newProc(label, dir, logDir, path string, env []string, args ...string) (*proc, error) {
	f, err := os.Create(filepath.Join(logDir, label+".log"))
	if err != nil {
		return nil, err
	}
	return &proc{label: label, path: path, args: args, env: env, dir: dir, log: f, wake: make(chan struct{}, 1)}, nil
}

func (p *proc) name() string { return p.label }

// supervise runs the process while it is wanted, until ctx ends.
func (p *proc) supervise(ctx context.Context) {
	for ctx.Err() == nil {
		p.mu.Lock()
		wanted := p.wanted
		p.mu.Unlock()
		if !wanted {
			select {
			case <-ctx.Done():
			case <-p.wake:
			}
			continue
		}
		cmd := exec.Command(p.path, p.args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = p.dir, p.env, p.log, p.log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(p.log, "chaos: start %s: %v\n", p.label, err)
			sleep(ctx, time.Second)
			continue
		}
		exited := make(chan struct{})
		p.mu.Lock()
		p.cmd, p.exited = cmd, exited
		p.mu.Unlock()
		err := cmd.Wait()
		close(exited)
		p.mu.Lock()
		unexpected := p.wanted
		if unexpected {
			p.crashes++
		}
		p.mu.Unlock()
		if unexpected && ctx.Err() == nil {
			fmt.Fprintf(p.log, "chaos: %s exited on its own (%v); starting it again\n", p.label, err)
			sleep(ctx, time.Second)
		}
	}
}

func (p *proc) start() {
	p.mu.Lock()
	p.wanted = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *proc) restart() error {
	p.start()
	return nil
}

// crash kills the process group with SIGKILL and waits until the process is gone.
func (p *proc) crash() error {
	p.mu.Lock()
	p.wanted = false
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s did not die", p.label)
	}
}

// stop ends the process for good at the end of the run.
func (p *proc) stop() {
	_ = p.crash()
	_ = p.log.Close()
}

// postgres is a private PostgreSQL cluster: initdb, pg_ctl start, and pg_ctl stop -m immediate as a crash.
type postgres struct {
	bin, data, logFile string
	port               int
	crashes            int
}

// newPostgres creates a cluster in dir. initdb and postgres refuse to run as root, so as root the cluster
// belongs to the postgres user.
func newPostgres(dir string) (*postgres, error) {
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	port, err := freeport.Loopback()
	if err != nil {
		return nil, err
	}
	pg := &postgres{bin: bin, data: filepath.Join(dir, "pg"), logFile: filepath.Join(dir, "postgres.log"), port: port}
	if err := os.MkdirAll(pg.data, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(pg.logFile, nil, 0o644); err != nil {
		return nil, err
	}
	if err := giveToPostgres(pg.data, pg.logFile); err != nil {
		return nil, err
	}
	if out, err := pg.tool("initdb", "-D", pg.data, "-U", "postgres", "--auth=trust", "-E", "UTF8").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	return pg, nil
}

func (pg *postgres) name() string { return "postgres" }

func (pg *postgres) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", pg.port, db)
}

// restart starts the server and waits until it accepts connections (crash recovery included).
// fsync is off: the suite kills processes, not the machine, so the page cache survives every crash.
func (pg *postgres) restart() error {
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off -c max_connections=200", pg.port, pg.data)
	if out, err := pg.tool("pg_ctl", "-D", pg.data, "-l", pg.logFile, "-w", "-t", "60", "-o", opts, "start").CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl start: %v: %s", err, out)
	}
	return nil
}

func (pg *postgres) crash() error {
	pg.crashes++
	if out, err := pg.tool("pg_ctl", "-D", pg.data, "-m", "immediate", "stop").CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

func (pg *postgres) stop() {
	_ = pg.tool("pg_ctl", "-D", pg.data, "-m", "fast", "stop").Run()
}

// tool runs a PostgreSQL program, as the postgres user when we are root.
func (pg *postgres) tool(name string, args ...string) *exec.Cmd {
	path := filepath.Join(pg.bin, name)
	if os.Geteuid() != 0 {
		return exec.Command(path, args...)
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return exec.Command(path, args...) // fails as root with initdb's own message
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	cmd.Dir = "/"
	return cmd
}

func giveToPostgres(paths ...string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root needs a postgres user to own the cluster: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range paths {
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// pgBin is the newest installed PostgreSQL's bin directory (CHAOS_PG_BIN overrides it).
func pgBin() (string, error) {
	if b := os.Getenv("CHAOS_PG_BIN"); b != "" {
		return b, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(dirs) == 0 {
		return "", errors.New("no PostgreSQL server under /usr/lib/postgresql; run: make deps (or set CHAOS_PG_BIN)")
	}
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a < b
	})
	return dirs[len(dirs)-1], nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
