// Package planner holds the plan-time checks that need live plugins: it resolves a
// workflow's components and plugins (engine/plan.Resolve) and asks each plugin for its
// schema and to validate the inputs it will be given. engine/plan itself stays pure (the
// plan's types, its text, the saved plan file and the lock file), so the scheduler can read
// saved plans without linking go-plugin or gRPC.
package planner
