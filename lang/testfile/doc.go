// Package testfile decodes test files (*.fsctest.hcl) for `fuscia test` and editors.
//
// # Model
//
// A test file holds run blocks. Each runs one workflow (by default the file's name with
// .fsctest.hcl replaced by .fsc.hcl, beside it) once with a payload, variables and mocks, and
// says what must hold afterwards: the run's status (expect_status), the nodes that must fail
// (expect_failures) and assert conditions. Variables and mocks written at the top level of the
// file apply to every run; a run's own take precedence.
//
// A mock stands in for a node (`mock "task.NAME"`, `mock "wait.NAME"`), for every task of a
// component or plugin block (mock_component, mock_plugin), or for builtin.http requests that
// match a URL glob (mock_http).
//
// # Phases
//
//   - [Decode] (and [Load], which reads the file first) checks everything that needs only the
//     test file: the blocks and arguments allowed, mock shapes, error kinds, run statuses.
//     Values fixed before a run (variables, payload, mock_http's url, method and status) are
//     evaluated here, with the language's functions and no references. Mock expressions and
//     assertions stay expressions: the runner evaluates them.
//   - [Check] checks one run against its loaded workflow: the mocked nodes, components,
//     plugins and tasks exist, expect_failures names nodes, the trigger and the variables are
//     declared.
//   - [Collect] finds the test files under the paths a command is given.
//
// Diagnostics are values with source ranges; nothing here prints.
package testfile
