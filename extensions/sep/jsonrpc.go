package sep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Error codes: JSON-RPC 2.0's and SEP's range (envelope.md).
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternalError      = -32603
	CodeBlocked            = -32000
	CodeNoUI               = -32001
	CodeNotTrusted         = -32002
	CodeContextViolation   = -32003
	CodeCapabilityDisabled = -32004
	CodeCancelled          = -32800
)

// Hook timeouts SEP fixes: tool_call and user_bash fail closed after a
// minute unless the manifest says otherwise; the others use the host's
// (shorter) intercept timeout.
const FailClosedHookTimeout = 60 * time.Second

// Message is one JSON-RPC 2.0 frame: request, notification or response.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// Errorf builds an Error.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// IsRequest: has an id and a method (a reply is expected).
func (m Message) IsRequest() bool { return len(m.ID) > 0 && m.Method != "" }

// IsResponse: has an id and no method.
func (m Message) IsResponse() bool { return len(m.ID) > 0 && m.Method == "" }

// Decode parses one line. A malformed line is -32700; a JSON value that is
// not a JSON-RPC 2.0 frame is -32600. The id of a frame that has one is
// returned with the error, so the error reply can echo it.
func Decode(line []byte) (Message, *Error) {
	line = bytes.TrimSpace(line)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		if json.Valid(line) {
			return Message{}, Errorf(CodeInvalidRequest, "not a JSON-RPC frame: a message is a JSON object")
		}
		return Message{}, Errorf(CodeParseError, "malformed JSON: %v", err)
	}
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return m, Errorf(CodeInvalidRequest, "invalid JSON-RPC frame: %v", err)
	}
	if id, ok := raw["id"]; ok {
		m.ID = id
		var n json.Number
		var s string
		if json.Unmarshal(id, &s) != nil && (json.Unmarshal(id, &n) != nil || bytes.ContainsAny(id, ".eE")) {
			m.ID = nil
			return m, Errorf(CodeInvalidRequest, "invalid JSON-RPC frame: id must be an integer or a string")
		}
	}
	switch {
	case m.JSONRPC != "2.0":
		return m, Errorf(CodeInvalidRequest, `invalid JSON-RPC frame: "jsonrpc" must be "2.0"`)
	case m.Method != "" && (m.Result != nil || m.Error != nil):
		return m, Errorf(CodeInvalidRequest, "invalid JSON-RPC frame: a request carries no result or error")
	case m.Method == "" && len(m.ID) == 0:
		return m, Errorf(CodeInvalidRequest, "invalid JSON-RPC frame: neither a method nor an id")
	case m.Method == "" && (m.Result == nil) == (m.Error == nil):
		return m, Errorf(CodeInvalidRequest, "invalid JSON-RPC frame: a response carries exactly one of result and error")
	}
	if len(m.Params) > 0 && m.Params[0] != '{' {
		return m, Errorf(CodeInvalidParams, "params must be an object")
	}
	return m, nil
}
