package provider

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
)

const readSchema = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`

// transcriptRequest has every kind of block: user text + image, assistant
// text + tool call, a tool result with text and an image (is_error), then
// a user follow-up.
func transcriptRequest(t *testing.T, prov string) Request {
	return Request{
		Model:  testModel(t, prov),
		System: "SYSTEM PROMPT",
		Tools: []ToolSpec{
			{Name: "read", Description: "Read a file", Schema: json.RawMessage(readSchema)},
			{Name: "ls", Description: "List"},
		},
		MaxTokens: 1234,
		Messages: []message.Message{
			{Role: message.RoleUser, Content: []message.Content{message.Text("look at this"), message.Image("image/png", "iVBORw0KGgo=")}},
			{Role: message.RoleAssistant, Content: []message.Content{message.Text("Reading."),
				{Type: message.TypeToolCall, ID: "call_1", Name: "read", Args: json.RawMessage(`{"path":"a.go"}`)}}},
			{Role: message.RoleUser, Content: []message.Content{{Type: message.TypeToolResult, CallID: "call_1", IsError: true,
				Content: []message.Content{message.Text("no such file"), message.Image("image/jpeg", "/9j/")}}}},
			{Role: message.RoleAssistant, Content: nil}, // an aborted turn: dropped
			{Role: message.RoleUser, Content: []message.Content{message.Text("try again")}},
		},
	}
}

func TestAnthropicRequestShapeAndCaching(t *testing.T) {
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.TextReply("ok")}})
	defer srv.Close()
	if _, _, err := stream(t, newTestClient(t, Anthropic, srv, nil, nil), transcriptRequest(t, Anthropic)); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "test-key" || r.Header.Get("Anthropic-Version") == "" {
		t.Fatalf("path %s headers %v", r.Path, r.Header)
	}
	b := r.Body
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}
	check("stream", b["stream"], true)
	check("model", b["model"], "claude-sonnet-4-5")
	check("max_tokens", b["max_tokens"], 1234.0)
	check("system text", path(b, "system", 0, "text"), "SYSTEM PROMPT")
	check("system cache_control", path(b, "system", 0, "cache_control", "type"), "ephemeral")
	check("tool 0 name", path(b, "tools", 0, "name"), "read")
	check("tool 0 schema", path(b, "tools", 0, "input_schema", "required"), []any{"path"})
	check("tool 0 no cache_control", path(b, "tools", 0, "cache_control"), nil)
	check("last tool cache_control", path(b, "tools", -1, "cache_control", "type"), "ephemeral")
	check("empty schema", path(b, "tools", 1, "input_schema", "type"), "object")

	msgs, _ := b["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("messages = %d, want 4 (empty assistant dropped): %v", len(msgs), msgs)
	}
	check("roles", []any{path(msgs, 0, "role"), path(msgs, 1, "role"), path(msgs, 2, "role"), path(msgs, 3, "role")},
		[]any{"user", "assistant", "user", "user"})
	check("image", path(msgs, 0, "content", 1, "source"), map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
	check("tool_use", path(msgs, 1, "content", 1), map[string]any{"type": "tool_use", "id": "call_1", "name": "read", "input": map[string]any{"path": "a.go"}})
	tr := path(msgs, 2, "content", 0)
	check("tool_result type", path(tr, "type"), "tool_result")
	check("tool_result id", path(tr, "tool_use_id"), "call_1")
	check("tool_result is_error", path(tr, "is_error"), true)
	check("tool_result text", path(tr, "content", 0, "text"), "no such file")
	check("tool_result image", path(tr, "content", 1, "source", "media_type"), "image/jpeg")
	check("tool_result not cached", path(tr, "cache_control"), nil)
	check("last user cache_control", path(msgs, 3, "content", -1, "cache_control", "type"), "ephemeral")
	if n := strings.Count(string(r.Raw), `"cache_control"`); n != 3 {
		t.Errorf("cache_control breakpoints = %d, want 3 (system, tools, last user)", n)
	}
}

func TestOpenAIRequestShape(t *testing.T) {
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.TextReply("ok")}})
	defer srv.Close()
	if _, _, err := stream(t, newTestClient(t, OpenAI, srv, nil, nil), transcriptRequest(t, OpenAI)); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
		t.Fatalf("path %s headers %v", r.Path, r.Header)
	}
	b := r.Body
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}
	check("stream", b["stream"], true)
	check("include_usage", path(b, "stream_options", "include_usage"), true)
	check("max_tokens (compatible server)", b["max_tokens"], 1234.0)
	check("tool", path(b, "tools", 0, "function", "name"), "read")
	check("tool params", path(b, "tools", 0, "function", "parameters", "required"), []any{"path"})
	msgs, _ := b["messages"].([]any)
	var roles []any
	for _, m := range msgs {
		roles = append(roles, path(m, "role"))
	}
	check("roles", roles, []any{"system", "user", "assistant", "tool", "user", "user"})
	check("system", path(msgs, 0, "content"), "SYSTEM PROMPT")
	check("user image", path(msgs, 1, "content", 1, "image_url", "url"), "data:image/png;base64,iVBORw0KGgo=")
	check("assistant text", path(msgs, 2, "content"), "Reading.")
	check("tool call", path(msgs, 2, "tool_calls", 0), map[string]any{"id": "call_1", "type": "function",
		"function": map[string]any{"name": "read", "arguments": `{"path":"a.go"}`}})
	check("tool id", path(msgs, 3, "tool_call_id"), "call_1")
	if s, _ := path(msgs, 3, "content").(string); !strings.HasPrefix(s, "no such file") {
		t.Errorf("tool content = %q", s)
	}
	check("tool image follows", path(msgs, 4, "content", 1, "image_url", "url"), "data:image/jpeg;base64,/9j/")
	check("follow-up", path(msgs, 5, "content"), "try again")
}

func TestOpenAIOfficialUsesMaxCompletionTokens(t *testing.T) {
	b, err := openaiBody(Request{Model: testModel(t, OpenAI), MaxTokens: 10}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"max_completion_tokens":10`) || strings.Contains(string(b), `"max_tokens"`) {
		t.Fatalf("body = %s", b)
	}
}

func TestNormalizeBaseURL(t *testing.T) {
	cases := []struct{ prov, in, want string }{
		{Anthropic, "http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{Anthropic, "http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080"},
		{Anthropic, "https://proxy.example/anthropic", "https://proxy.example/anthropic"},
		{OpenAI, "http://localhost:11434", "http://localhost:11434/v1"},
		{OpenAI, "http://localhost:11434/v1", "http://localhost:11434/v1"},
		{OpenAI, "https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"},
		{OpenAI, "", ""},
	}
	for _, c := range cases {
		if got := normalizeBaseURL(c.prov, c.in); got != c.want {
			t.Errorf("%s %q → %q, want %q", c.prov, c.in, got, c.want)
		}
	}
}
