package sep

import "github.com/zot-editors/zot/extensions/wire"

// zot's event and intercept names ↔ SEP's. Names that are the same on
// both sides are absent.
var (
	sepEventName = map[string]string{
		wire.EventAssistantMessage: "message_end",
		wire.EventToolCall:         "tool_execution_start", // as an observed event
		wire.EventToolResult:       "tool_execution_end",
		wire.EventCompactStart:     "session_before_compact",
		wire.EventCompactEnd:       "session_compact",
	}
	sepHookName = map[string]string{
		wire.EventAssistantMessage: "message_end",
	}
)

// HookName is SEP's name for the hook zot calls event.
func HookName(event string) string {
	if n, ok := sepHookName[event]; ok {
		return n
	}
	return event
}

// EventName is SEP's name for the observed zot event.
func EventName(event string) string {
	if n, ok := sepEventName[event]; ok {
		return n
	}
	return event
}

// zotHooks: the SEP hooks zot serves, by SEP name → zot intercept.
var zotHooks = map[string]string{
	"tool_call":          wire.EventToolCall,
	"tool_result":        wire.EventToolResult,
	"input":              wire.EventInput,
	"before_agent_start": wire.EventBeforeAgentStart,
	"context":            wire.EventContext,
	"message_end":        wire.EventAssistantMessage,
	"user_bash":          wire.EventUserBash,
}

// zotEvents: the SEP events zot delivers, by SEP name → zot event.
var zotEvents = map[string]string{
	"session_start":          wire.EventSessionStart,
	"session_shutdown":       wire.EventSessionShutdown,
	"turn_start":             wire.EventTurnStart,
	"turn_end":               wire.EventTurnEnd,
	"agent_start":            wire.EventAgentStart,
	"agent_end":              wire.EventAgentEnd,
	"message_end":            wire.EventAssistantMessage,
	"tool_execution_start":   wire.EventToolCall,
	"model_select":           wire.EventModelSelect,
	"session_before_compact": wire.EventCompactStart,
	"session_compact":        wire.EventCompactEnd,
}

// defaultHooks are intercepted for an extension that declares no hooks
// (SEP: "absent ⇒ run every hook to be safe"); context and message_end
// are left out, as SEP hosts skip them unless declared, since holding
// every model call or answer for an extension that never asked is costly.
var defaultHooks = []string{"tool_call", "tool_result", "input", "before_agent_start", "user_bash"}
