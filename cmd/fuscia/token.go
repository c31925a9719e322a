package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine/local"
)

// tokenSubcommands are the subcommands of `fuscia token`, in the order usage lists them.
var tokenSubcommands = []struct {
	name, synopsis string
	run            func(ctx context.Context, c *cli, args []string) int
}{
	{"create", "Create an API token for serve's -listen and print it (shown once)", runTokenCreate},
	{"list", "List the API tokens (never their secrets)", runTokenList},
	{"revoke", "Revoke an API token: serve refuses it at once", runTokenRevoke},
}

func runToken(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		tokenUsage(c.stderr)
		return exitInvalid
	}
	switch args[0] {
	case "-help", "--help", "-h", "help":
		tokenUsage(c.stdout)
		return exitOK
	}
	for _, sub := range tokenSubcommands {
		if sub.name == args[0] {
			return sub.run(ctx, c, args[1:])
		}
	}
	fmt.Fprintf(c.stderr, "Error: unknown subcommand %q of fuscia token.\n\n", args[0])
	tokenUsage(c.stderr)
	return exitInvalid
}

func tokenUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: fuscia token SUBCOMMAND [options]")
	fmt.Fprintln(w, "\nSubcommands:")
	for _, sub := range tokenSubcommands {
		fmt.Fprintf(w, "  %-7s %s\n", sub.name, sub.synopsis)
	}
	fmt.Fprintln(w, "\nTokens authenticate the HTTP API on serve's -listen (Authorization: Bearer TOKEN); the unix socket needs none.")
	fmt.Fprintln(w, "Every subcommand takes -help and -home DIR (default $FUSCIA_HOME or ~/.fuscia).")
}

func runTokenCreate(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "token create", "token create NAME [-scope read|operate|admin] [-expires DURATION] [-json]")
	scopeText := fs.String("scope", string(local.ScopeRead), "what the token may do: `read` (GET), operate (also start, cancel, resume, signal) or admin (everything)")
	expires := fs.String("expires", "", "the token stops working after `DURATION` (720h, 30d; default: until revoked)")
	asJSON := fs.Bool("json", false, `print {"name", "token", "scope", "expires_at"} as JSON`)
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(args) != 1 {
		return c.fail(*asJSON, "Wrong arguments", "Usage: fuscia "+fs.usage)
	}
	name := args[0]
	if err := local.CheckTokenName(name); err != nil {
		return c.fail(*asJSON, "Invalid token name", tokenErrText(err))
	}
	scope, err := local.ParseScope(*scopeText)
	if err != nil {
		return fs.invalid(*asJSON, "Invalid -scope", fmt.Sprintf("%q is not a scope: use read, operate or admin.", *scopeText))
	}
	var ttl time.Duration
	if *expires != "" {
		if ttl, ok = parseAge(*expires); !ok || ttl == 0 {
			return fs.invalid(*asJSON, "Invalid -expires", fmt.Sprintf("%q is not a lifetime: use a duration such as 720h or 30d, or leave -expires out for a token that lasts until revoked.", *expires))
		}
	}
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()
	tok, err := b.CreateToken(ctx, name, scope, ttl)
	switch {
	case errors.Is(err, local.ErrTokenExists):
		return c.fail(*asJSON, "Token already exists",
			fmt.Sprintf("There is already a token named %q in %s. Choose another name, or revoke it first: fuscia token revoke %s", name, home, name))
	case errors.Is(err, local.ErrInvalidToken):
		return c.fail(*asJSON, "Invalid token", tokenErrText(err))
	case err != nil:
		return c.operationFailed("Cannot create the token", err)
	}
	if *asJSON {
		if err := writeJSON(c.stdout, tok); err != nil {
			return c.operationFailed("Cannot write the token", err)
		}
		return exitOK
	}
	// The token alone on stdout (TOKEN=$(fuscia token create NAME) works); the rest is for people.
	fmt.Fprintln(c.stdout, tok.Token)
	until := "until revoked"
	if tok.ExpiresAt != nil {
		until = "until " + fmtTime(*tok.ExpiresAt)
	}
	fmt.Fprintf(c.stderr, "Created token %q with scope %s, valid %s.\nThis is the only time it is shown: keep it where its client reads it. Send it as: Authorization: Bearer TOKEN\n",
		tok.Name, tok.Scope, until)
	return exitOK
}

func runTokenList(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "token list", "token list [-json]")
	asJSON := fs.Bool("json", false, "print the tokens as JSON")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(args) > 0 {
		return c.fail(*asJSON, "Unexpected argument", fmt.Sprintf("fuscia token list takes no argument; got %q.", args[0]))
	}
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()
	toks, err := b.Tokens(ctx)
	if err != nil {
		return c.operationFailed("Cannot list the tokens", err)
	}
	if *asJSON {
		if err := writeJSON(c.stdout, map[string]any{"tokens": toks}); err != nil {
			return c.operationFailed("Cannot write the tokens", err)
		}
		return exitOK
	}
	if len(toks) == 0 {
		fmt.Fprintln(c.stdout, "No tokens. Create one with: fuscia token create NAME -scope read|operate|admin")
		return exitOK
	}
	rows := [][]string{{"NAME", "SCOPE", "CREATED", "EXPIRES", "LAST USED"}}
	opt := func(t *time.Time, none string) string {
		if t == nil {
			return none
		}
		return fmtTime(*t)
	}
	for _, t := range toks {
		rows = append(rows, []string{t.Name, string(t.Scope), fmtTime(t.CreatedAt), opt(t.ExpiresAt, "never"), opt(t.LastUsedAt, "-")})
	}
	var out bytes.Buffer
	writeTable(&out, "", rows)
	if _, err := c.stdout.Write(out.Bytes()); err != nil {
		return c.operationFailed("Cannot write the tokens", err)
	}
	return exitOK
}

func runTokenRevoke(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "token revoke", "token revoke NAME")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(args) != 1 {
		return c.fail(false, "Wrong arguments", "Usage: fuscia "+fs.usage+"\nList the tokens with: fuscia token list")
	}
	name := args[0]
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()
	err := b.RevokeToken(ctx, name)
	switch {
	case errors.Is(err, local.ErrNoToken):
		return c.fail(false, "Unknown token", fmt.Sprintf("There is no token named %q in %s.\nList the tokens with: fuscia token list", name, home))
	case err != nil:
		return c.operationFailed("Cannot revoke the token", err)
	}
	fmt.Fprintf(c.stdout, "Revoked token %q: serve refuses it from now on.\n", name)
	return exitOK
}

// tokenErrText is an ErrInvalidToken error as a sentence, without the sentinel's words.
func tokenErrText(err error) string {
	return sentenceOf(errors.New(strings.TrimPrefix(err.Error(), local.ErrInvalidToken.Error()+": ")))
}
