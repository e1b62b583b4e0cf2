// Package examples holds zot extensions that run under our host
// unmodified, one per directory: hello, guard and todo (Go, written with
// extensions/sdk), python (raw Python 3, no SDK) and node (raw Node, no
// SDK). Each directory has an extension.json, a README and the program.
//
// examples_test.go spawns every one as a real subprocess and speaks the
// protocol to it; examplestest.Build prepares a runnable copy for other
// packages' tests.
package examples
