package provider

import (
	"fmt"
	"sort"
	"strings"
)

// Reasoning levels: how much the model may think before it answers.
const (
	ReasoningOff    = "off"
	ReasoningLow    = "low"
	ReasoningMedium = "medium"
	ReasoningHigh   = "high"
)

// ReasoningLevels lists the levels in increasing order.
var ReasoningLevels = []string{ReasoningOff, ReasoningLow, ReasoningMedium, ReasoningHigh}

// ParseReasoning checks a level; "" stays "" (the model's default).
func ParseReasoning(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "", ReasoningOff, ReasoningLow, ReasoningMedium, ReasoningHigh:
		return s, nil
	case "none", "false", "0":
		return ReasoningOff, nil
	}
	return "", fmt.Errorf("unknown reasoning level %q (want off, low, medium or high)", s)
}

// Anthropic extended thinking: budget_tokens per level. The API wants at
// least 1024 and less than max_tokens; anthropicThinking fits the budget
// under the request's max_tokens and keeps room for the answer.
var anthropicBudgets = map[string]int64{
	ReasoningLow:    4096,
	ReasoningMedium: 10_000,
	ReasoningHigh:   32_000,
}

const (
	minThinkingBudget = 1024
	// minAnswerTokens is what a thinking request keeps for the answer.
	minAnswerTokens = 1024
)

// anthropicThinking is the budget for a level under maxTokens, or 0 when
// the level is off or maxTokens leaves no room to think.
func anthropicThinking(level string, maxTokens int64) int64 {
	b := anthropicBudgets[level]
	if b == 0 {
		return 0
	}
	if b > maxTokens-minAnswerTokens {
		b = maxTokens - minAnswerTokens
	}
	if b < minThinkingBudget {
		return 0
	}
	return b
}

// EffectiveReasoning is the level a request to m is sent with: the
// requested one, else the model's default; always off for models that do
// not reason.
func EffectiveReasoning(m Model, requested string) string {
	if !m.Reasoning {
		return ReasoningOff
	}
	if requested != "" {
		return requested
	}
	if m.DefaultReasoning != "" {
		return m.DefaultReasoning
	}
	return ReasoningOff
}

// CheckReasoning reports, for a level asked for explicitly, whether m can
// honour it: a model that does not reason accepts only off, and the error
// names the models that do.
func (c *Catalog) CheckReasoning(m Model, level string) error {
	if level == "" || level == ReasoningOff || m.Reasoning {
		return nil
	}
	var ids []string
	for _, e := range c.Models(m.Provider) {
		if e.Reasoning {
			ids = append(ids, e.ID)
		}
	}
	sort.Strings(ids)
	hint := "no " + m.Provider + " model in the catalogue reasons"
	if len(ids) > 0 {
		hint = "models that reason: " + strings.Join(ids, ", ")
	}
	return fmt.Errorf("model %s does not reason, so --reasoning %s has no effect (%s; a custom model can set \"reasoning\": true in models.json)",
		m.ID, level, hint)
}
