package engine

import "context"

// Who answered a wait is journaled with the answer (journal.Entry.AnsweredBy) and shown by
// `show` and the API: an approval is worth little without its approver. It travels in the
// signal's context because it is a property of the request — the API token that authenticated
// it on serve's TCP listener, or the owner's socket — set where the request is received
// (engine/local), far from the engine's Signal.

type answeredByKey struct{}

// WithAnsweredBy returns ctx carrying who answers the signals sent with it: the name of an API
// token, or "local" for the owner's socket and a store opened directly.
func WithAnsweredBy(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, answeredByKey{}, who)
}

// AnsweredBy returns who WithAnsweredBy says answers the signals sent with ctx; "" when
// nobody said (an embedding program's own signal).
func AnsweredBy(ctx context.Context) string {
	who, _ := ctx.Value(answeredByKey{}).(string)
	return who
}
