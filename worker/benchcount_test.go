package worker_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
)

// calls counts what a benchmark sends to its servers: the gRPC calls of its Temporal client by method
// (long polls included: a poll that brings a task is one call) and the statements its pool sends to
// PostgreSQL (a batch is one round trip; BEGIN and COMMIT count).
type calls struct {
	mu      sync.Mutex
	rpcs    map[string]int
	queries int
}

func newCalls() *calls { return &calls{rpcs: map[string]int{}} }

func (c *calls) interceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	c.mu.Lock()
	c.rpcs[method[strings.LastIndexByte(method, '/')+1:]]++
	c.mu.Unlock()
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (c *calls) count() { c.mu.Lock(); c.queries++; c.mu.Unlock() }

func (c *calls) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.count()
	return ctx
}
func (c *calls) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *calls) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.count()
	return ctx
}
func (c *calls) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *calls) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// callCount is what calls counted up to a moment.
type callCount struct {
	rpcs    map[string]int
	queries int
}

func (c *calls) now() callCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	return callCount{rpcs: maps.Clone(c.rpcs), queries: c.queries}
}

// since is the calls from before to c, per task: the statements, all RPCs and those of each method.
func (c callCount) since(before callCount, tasks float64) (queries, rpcs float64, per string) {
	var names []string
	var total int
	for m, n := range c.rpcs {
		if d := n - before.rpcs[m]; d > 0 {
			names = append(names, fmt.Sprintf("%s %.2f", m, float64(d)/tasks))
			total += d
		}
	}
	slices.Sort(names)
	return float64(c.queries-before.queries) / tasks, float64(total) / tasks, strings.Join(names, ", ")
}

// historyEvents is the mean length of the histories of the workflows ids.
func historyEvents(b *testing.B, c client.Client, ids []string) float64 {
	var n int64
	for _, id := range ids {
		d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		require.NoError(b, err)
		n += d.GetWorkflowExecutionInfo().GetHistoryLength()
	}
	return float64(n) / float64(len(ids))
}
