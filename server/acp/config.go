package acp

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// Session config options (ACP's configOptions): the permission mode, the
// model and, for a model that reasons, how much it thinks. They are the
// same settings as session/set_mode and session/set_model, in the form
// newer clients show; every answer that opens a session carries them and
// config_option_update follows every change, wherever it came from.
const (
	configMode      = "mode"
	configModel     = "model"
	configReasoning = "reasoning"
)

var reasoningLevels = []string{"off", "low", "medium", "high"}

// configOptions are the session's options with their current values.
func (ss *session) configOptions() []sdk.SessionConfigOption {
	var modes sdk.SessionConfigSelectOptionsUngrouped
	ms := ss.modeState()
	for _, m := range ms.AvailableModes {
		modes = append(modes, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.Id), Name: m.Name, Description: m.Description})
	}
	var models sdk.SessionConfigSelectOptionsUngrouped
	mo := ss.modelState()
	for _, m := range mo.AvailableModels {
		models = append(models, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.ModelId), Name: m.Name, Description: m.Description})
	}
	out := []sdk.SessionConfigOption{
		{Select: &sdk.SessionConfigOptionSelect{Id: configMode, Name: "Permission mode", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryMode),
			Description:  sdk.Ptr("What zot may do without asking"),
			CurrentValue: sdk.SessionConfigValueId(ms.CurrentModeId), Options: sdk.SessionConfigSelectOptions{Ungrouped: &modes}, Type: "select"}},
		{Select: &sdk.SessionConfigOptionSelect{Id: configModel, Name: "Model", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryModel),
			CurrentValue: sdk.SessionConfigValueId(mo.CurrentModelId), Options: sdk.SessionConfigSelectOptions{Ungrouped: &models}, Type: "select"}},
	}
	if ss.rt.Model().Reasoning {
		var levels sdk.SessionConfigSelectOptionsUngrouped
		for _, l := range reasoningLevels {
			levels = append(levels, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(l), Name: l})
		}
		out = append(out, sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{Id: configReasoning, Name: "Reasoning",
			Category: sdk.Ptr(sdk.SessionConfigOptionCategoryThoughtLevel), Description: sdk.Ptr("How much the model thinks before answering"),
			CurrentValue: sdk.SessionConfigValueId(ss.rt.Reasoning()), Options: sdk.SessionConfigSelectOptions{Ungrouped: &levels}, Type: "select"}})
	}
	return out
}

// configChanged tells the client the options' values (config_option_update).
func (ss *session) configChanged() {
	ss.update(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: ss.configOptions()}})
}

// SetSessionConfigOption sets the mode, the model or the reasoning level.
func (s *Server) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if p.ValueId == nil {
		return sdk.SetSessionConfigOptionResponse{}, fieldError("type", "zot's config options are selects (mode, model, reasoning): send configId and a value id, not a boolean")
	}
	v := p.ValueId
	ss, err := s.lookup(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	value := string(v.Value)
	switch string(v.ConfigId) {
	case configMode:
		m, ok := parseMode(value)
		if !ok {
			return sdk.SetSessionConfigOptionResponse{}, fieldError("value", "mode must be auto, ask or readonly, not %q", value)
		}
		ss.setMode(m)
	case configModel:
		if err := ss.setModel("value", value); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
	case configReasoning:
		if !ss.rt.Model().Reasoning {
			return sdk.SetSessionConfigOptionResponse{}, fieldError("configId", "%q: the model %s does not reason", configReasoning, ss.rt.State().Model)
		}
		if err := ss.rt.SetReasoning(value); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, fieldError("value", "reasoning must be one of %s: %v", strings.Join(reasoningLevels, ", "), err)
		}
		ss.configChanged()
	default:
		return sdk.SetSessionConfigOptionResponse{}, fieldError("configId", "unknown config option %q: zot's are mode, model and reasoning", v.ConfigId)
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: ss.configOptions()}, nil
}

// convertJSON copies between the SDK's stable and unstable forms of one
// schema type (session/fork answers with the unstable ones).
func convertJSON[T any](in any) (T, error) {
	var out T
	b, err := json.Marshal(in)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(b, &out)
	return out, err
}
