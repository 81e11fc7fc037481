package mcp

import (
	"context"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves agentID's skills from b over the stdio transport (one
// JSON-RPC message a line on in and out) until in ends or ctx does. It is
// the same server as a Handler session's: the same tools, resources,
// prompt and list_changed notifications.
func ServeStdio(ctx context.Context, b Backend, agentID string, opts Options, in io.ReadCloser, out io.WriteCloser) error {
	opts = opts.withDefaults()
	srv := newServer(b, agentID, serverConfig{name: opts.Name, version: opts.Version, logger: opts.sdkLogger})
	fp, _ := fingerprint(ctx, b, agentID)
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { watch(wctx, b, agentID, srv, fp) })
	err := srv.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
	cancel()
	wg.Wait()
	return err
}
