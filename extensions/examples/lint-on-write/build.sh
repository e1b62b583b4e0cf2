#!/bin/sh
# Builds the extension binary next to its extension.json.
set -e
cd "$(dirname "$0")"
go build -o lint-on-write .
