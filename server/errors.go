package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.lsp.dev/jsonrpc2"
)

// Error codes beyond JSON-RPC's own (docs/protocol.md, "Errors").
const (
	// CodeRequestFailed is LSP 3.17's RequestFailed: the request was
	// valid but could not be done (busy, unknown model, I/O …).
	CodeRequestFailed jsonrpc2.Code = -32803
	// CodeRequestCancelled is LSP's RequestCancelled.
	CodeRequestCancelled jsonrpc2.Code = -32800
	// CodeServerNotInitialized is JSON-RPC's reserved ServerNotInitialized.
	CodeServerNotInitialized jsonrpc2.Code = -32002
	// CodeNoRuntime means the agent could not start (no API key, unknown
	// provider or model): the message is meant for the user as is.
	CodeNoRuntime jsonrpc2.Code = -32001
)

func rpcError(code jsonrpc2.Code, format string, args ...any) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func errNotInitialized() error {
	return rpcError(CodeServerNotInitialized, "zot lsp is not initialized yet: send initialize first")
}

func errNoRuntime(err error) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "no API key") {
		msg += "; in the editor, set apiKey in initializationOptions"
	}
	return rpcError(CodeNoRuntime, "zot cannot start: %s", msg)
}

func errFailed(err error) error {
	var re *jsonrpc2.Error
	if errors.As(err, &re) {
		return re
	}
	return rpcError(CodeRequestFailed, "%s", err.Error())
}

func errMethodNotFound(method string) error {
	return rpcError(jsonrpc2.MethodNotFound, "unknown method %q; zot methods: %s", method, strings.Join(zotMethodNames(), ", "))
}

// fieldError is an InvalidParams error naming the offending field.
func fieldError(method, field, format string, args ...any) error {
	if field == "" {
		return rpcError(jsonrpc2.InvalidParams, "%s: params %s", method, fmt.Sprintf(format, args...))
	}
	return rpcError(jsonrpc2.InvalidParams, "%s: %q %s", method, field, fmt.Sprintf(format, args...))
}

// decodeParams unmarshals a request's params into v (a pointer to a
// struct). Missing or null params decode as {}; unknown fields are
// ignored (newer clients); a wrong type is an InvalidParams error that
// names the field and the expected JSON type.
func decodeParams(method string, raw json.RawMessage, v any) error {
	// No string copy of raw: a prompt's params can be tens of MiB.
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '{' {
		return fieldError(method, "", "must be an object, not %s", jsonKind(string(raw[:min(len(raw), 8)])))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return paramsError(method, err)
	}
	return nil
}

// paramsError is the InvalidParams error for encoding/json's error
// decoding method's params.
func paramsError(method string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fieldError(method, te.Field, "must be %s, not %s", expected(te.Type), te.Value)
	}
	return fieldError(method, "", "are not valid: %v", err)
}

// jsonKind names the JSON type of a raw value.
func jsonKind(s string) string {
	switch {
	case s == "":
		return "empty"
	case s[0] == '[':
		return "an array"
	case s[0] == '{':
		return "an object"
	case s[0] == '"':
		return "a string"
	case s == "true" || s == "false":
		return "a boolean"
	case s == "null":
		return "null"
	}
	return "a number"
}

func expected(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}
