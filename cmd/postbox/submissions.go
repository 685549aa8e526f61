package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/postbox/postbox/client"
	"github.com/postbox/postbox/client/pull"
	"github.com/postbox/postbox/config"
)

// runSubmissions runs the agency's side of the download queue: `submissions pull` drains it into a folder.
func runSubmissions(ctx context.Context, cfg config.Config, args []string) error {
	if len(args) == 0 || args[0] != "pull" {
		return errors.New(`usage: postbox submissions pull --dir DIR --api-key KEY --token-file F [--url URL] [--service-code C]`)
	}
	fs := flag.NewFlagSet("submissions pull", flag.ContinueOnError)
	dir := fs.String("dir", "", "the folder to store the submissions in, one folder each (required)")
	base := fs.String("url", cfg.PublicURL, "the API's base URL")
	key := fs.String("api-key", "", "the service owner's API key (required)")
	tokenFile := fs.String("token-file", "", "a file holding the organization's bearer token (required)")
	service := fs.String("service-code", "", "only the submissions of this service")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" || *key == "" || *tokenFile == "" {
		return errors.New("submissions pull: --dir, --api-key and --token-file are required")
	}
	token, err := os.ReadFile(*tokenFile)
	if err != nil {
		return err
	}
	c, err := client.New(*base, *key, client.WithBearerToken(strings.TrimSpace(string(token))))
	if err != nil {
		return err
	}
	p := &pull.Puller{Client: c, Dir: *dir, Progress: os.Stderr, ServiceCode: *service}
	n, err := p.Pull(ctx)
	fmt.Fprintf(os.Stderr, "%d submissions stored and confirmed\n", n)
	return err
}
