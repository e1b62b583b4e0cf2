package server

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/segmentio/encoding/json"
	"go.lsp.dev/jsonrpc2"
)

// decodeMessage is jsonrpc2.DecodeMessage without its copies. jsonrpc2
// v0.10.0 decodes through a json.Decoder, which copies each body into a
// fresh buffer of at least 32 KiB and grows it by doubling: for a 60 MiB
// prompt about four times the body, and 32 KiB of garbage per keystroke.
// Here the body is parsed in place and params, result and string ids
// point into it: the body is the one copy of the message.
func decodeMessage(body []byte) (jsonrpc2.Message, error) {
	var w struct {
		Version *string         `json:"jsonrpc"`
		ID      *jsonrpc2.ID    `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   *jsonrpc2.Error `json:"error"`
	}
	rest, err := json.Parse(body, &w, json.DontCopyRawMessage)
	if err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if len(skipSpace(rest)) != 0 {
		return nil, errors.New("unmarshaling jsonrpc message: data after the top-level value")
	}
	if w.Version != nil && *w.Version != jsonrpc2.Version {
		return nil, fmt.Errorf("invalid RPC version %v", *w.Version)
	}
	// "params": null is no params, as in jsonrpc2.
	w.Params, w.Result = nullToNil(w.Params), nullToNil(w.Result)
	switch {
	case w.Method == "" && w.ID == nil:
		return nil, jsonrpc2.ErrInvalidRequest
	case w.Method == "":
		var err error
		if w.Error != nil {
			err = w.Error
		}
		return newResponse(*w.ID, w.Result, err), nil
	case w.ID == nil:
		return newNotification(w.Method, w.Params), nil
	default:
		return newCall(*w.ID, w.Method, w.Params), nil
	}
}

func nullToNil(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}

// jsonrpc2's message types have unexported fields and only marshalling
// constructors (NewCall re-encodes params: two more copies, one of them
// left in an encoder pool). These mirrors let decodeMessage build them
// around the body. wireLayoutOK checks, once, that each mirror matches
// its type field for field (names, types, offsets); if a new jsonrpc2
// ever differs, the constructors fall back to jsonrpc2's own.
type (
	callLayout struct {
		method string
		params json.RawMessage
		id     jsonrpc2.ID
	}
	notificationLayout struct {
		method string
		params json.RawMessage
	}
	responseLayout struct {
		result json.RawMessage
		err    error
		id     jsonrpc2.ID
	}
)

var wireLayoutOK = sameLayout[jsonrpc2.Call, callLayout]() &&
	sameLayout[jsonrpc2.Notification, notificationLayout]() &&
	sameLayout[jsonrpc2.Response, responseLayout]()

func sameLayout[T, M any]() bool {
	t, m := reflect.TypeFor[T](), reflect.TypeFor[M]()
	if t.Size() != m.Size() || t.NumField() != m.NumField() {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		a, b := t.Field(i), m.Field(i)
		if a.Name != b.Name || a.Type != b.Type || a.Offset != b.Offset {
			return false
		}
	}
	return true
}

func newCall(id jsonrpc2.ID, method string, params json.RawMessage) *jsonrpc2.Call {
	if !wireLayoutOK {
		c, _ := jsonrpc2.NewCall(id, method, params)
		return c
	}
	return (*jsonrpc2.Call)(unsafe.Pointer(&callLayout{method: method, params: params, id: id}))
}

func newNotification(method string, params json.RawMessage) *jsonrpc2.Notification {
	if !wireLayoutOK {
		n, _ := jsonrpc2.NewNotification(method, params)
		return n
	}
	return (*jsonrpc2.Notification)(unsafe.Pointer(&notificationLayout{method: method, params: params}))
}

func newResponse(id jsonrpc2.ID, result json.RawMessage, err error) *jsonrpc2.Response {
	if !wireLayoutOK {
		r, _ := jsonrpc2.NewResponse(id, result, err)
		return r
	}
	return (*jsonrpc2.Response)(unsafe.Pointer(&responseLayout{result: result, err: err, id: id}))
}
