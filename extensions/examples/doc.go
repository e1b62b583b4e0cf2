// Package examples holds zot extensions that run under our host
// unmodified, one per directory: hello, guard, todo, permission-gate,
// plan-mode and lint-on-write (Go, written with extensions/sdk), python
// (raw Python 3, no SDK) and node (raw Node, no SDK). Each directory has
// an extension.json and the program (the Go ones a build.sh; hello,
// guard, todo, python and node a README).
//
// examples_test.go spawns every one as a real subprocess and speaks the
// protocol to it; examplestest.Build prepares a runnable copy for other
// packages' tests.
package examples
