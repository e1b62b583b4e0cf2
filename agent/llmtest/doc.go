// Package llmtest is a scripted loopback LLM server for tests. It speaks the
// streaming Anthropic Messages API (POST /v1/messages) and the streaming
// OpenAI Chat Completions API (POST /v1/chat/completions), plus GET /v1/models
// for both, well enough for the official SDKs and zot's provider clients.
//
// A Script is a list of replies consumed in order, one per model request,
// whichever endpoint is hit. Every request is recorded (path, headers, parsed
// JSON body) so tests can assert what the client sent.
//
//	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
//		llmtest.ToolReply("read", map[string]any{"path": "main.go"}),
//		llmtest.TextReply("All done."),
//	}})
//	defer srv.Close()
//	// --base-url srv.URL() works for both providers.
//
// Helpers: TextReply, ToolReply, ErrorReply, Seconds (for RetryAfter);
// srv.Requests() for what was sent (GET /llmtest/requests serves the same
// to a test in another process: a JSON array of {"path", "body"}), srv.Append to add replies, Serve for
// `zot mock-llm --script FILE` (LoadScript reads the file).
//
// A scripted 5xx without retry_after makes zot's client back off for real
// (0.5 s, 1 s, 2 s): give such replies "retry_after": 0, or set
// provider.Options.Wait / MaxRetries -1 in the test.
//
// # Base URLs
//
// The Anthropic SDK appends "v1/messages" to its base URL; the OpenAI SDK
// appends "chat/completions" (its default base URL ends in /v1). The server
// routes on the path suffix (…/messages, …/chat/completions, …/models), so
// any prefix works: URL() ("http://127.0.0.1:PORT") is accepted by both
// SDKs, and so is URL()+"/v1". AnthropicURL() and OpenAIURL() return the form
// each SDK expects against the real API (without and with /v1).
//
// # Script JSON
//
// LoadScript reads a JSON object, or a bare JSON array of replies:
//
//	{
//	  "loop": false,
//	  "replies": [
//	    {"text": "Hello there, world"},
//	    {"deltas": ["Hel", "lo"], "usage": {"input": 120, "output": 2, "cache_read": 100}},
//	    {"repeat_text": {"text": "tok ", "count": 120}},
//	    {"text": "Let me look.", "tool_calls": [
//	      {"id": "toolu_1", "name": "read", "args": {"path": "main.go"}},
//	      {"name": "ls", "args": {}}]},
//	    {"stop": "length", "text": "truncat"},
//	    {"text": "slow", "delay_ms": 200},
//	    {"fail_times": 2, "retry_after": 0, "text": "ok after two 429s"},
//	    {"status": 400, "error_message": "prompt is too long"},
//	    {"status": 529, "error_message": "Overloaded", "retry_after": 1},
//	    {"hang": true},
//	    {"thinking": "The user wants a greeting.", "text": "Hello!"},
//	    {"text": "half an answer then", "error_after": 2},
//	    {"text": "half an answer then", "stall_after": 2}
//	  ]
//	}
//
// Reply fields:
//
//	text         assistant text, split into word-sized deltas
//	deltas       assistant text as explicit deltas (instead of text)
//	repeat_text  {text, count}: count deltas of text (cheap long streams)
//	tool_calls   [{id?, name, args}]; args is a JSON object; ids default to
//	             toolu_llmtest_R_I (Anthropic) / call_llmtest_R_I (OpenAI)
//	usage        {input, output, cache_read, cache_write}; absent: input is
//	             request bytes/4, output is reply bytes/4 (at least 1 each).
//	             OpenAI reports prompt_tokens = input + cache_read and
//	             cached_tokens = cache_read (cache_write is not reported).
//	stop         override the stop reason: end_turn, tool_use, length (mapped
//	             to max_tokens / stop / tool_calls / length per API), or any
//	             other string sent as is. Default: tool_use when there are tool
//	             calls, else end_turn.
//	delay_ms     sleep before each delta (slow streams for abort tests)
//	status       answer this HTTP status (400, 429, 500, 529…) with a JSON
//	             error body in the API's shape instead of a stream
//	error_message  the message of that error
//	retry_after  seconds for the Retry-After header (status and fail_times)
//	fail_times   answer 429 this many times before streaming the reply
//	             (Retry-After: retry_after, default 0, so clients retry at once)
//	hang         send 200 + SSE headers, then nothing until the client leaves
//	thinking     reasoning streamed before the text: Anthropic a thinking
//	             block (thinking_delta events, then a signature_delta), OpenAI
//	             reasoning_content deltas
//	signature    the thinking block's signature (default sig_llmtest_N)
//	redacted_thinking  data of a redacted_thinking block after it (Anthropic)
//	error_after  after this many text deltas (0: before the first, or before
//	             the tool calls of a reply without text), send an error event
//	             in the stream (Anthropic "event: error", OpenAI a chunk
//	             {"error":{…}}) and end it: an overloaded API mid-answer
//	error_type   that error's type (default overloaded_error); error_message
//	             its message (default "Overloaded")
//	stall_after  after this many text deltas, keep the connection open and
//	             send nothing until the client leaves (idle-timeout tests;
//	             0 stalls after message_start / the first chunk)
//
// A fail_times 429 does not consume the reply; every other answer does. When
// the replies are used up the server answers HTTP 500 with the error message
// "llmtest: script exhausted after N replies" and "x-should-retry: false",
// unless the script sets "loop": true, which cycles the replies forever.
// Non-streaming requests get 400 "llmtest supports streaming only".
package llmtest
