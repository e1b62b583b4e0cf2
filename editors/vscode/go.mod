// This directory is a Node package, not Go: this file keeps the Go code some
// npm dependencies carry (node_modules) out of zot's module (go vet ./..., go test ./...).
module zot.invalid/editors/vscode

go 1.26
