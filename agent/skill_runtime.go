package agent

import (
	"os"

	"github.com/zot-editors/zot/agent/skills"
)

// refreshSkills rediscovers the skills (at New and at every prompt, so a
// SKILL.md added meanwhile is offered). Each broken file is warned about
// once per content of the warning.
func (r *Runtime) refreshSkills() {
	if r.cfg.NoSkills {
		return
	}
	userHome, _ := os.UserHomeDir()
	list, warns := r.skillCache.Discover(skills.Roots(r.cfg.CWD, r.cfg.Home, userHome))
	r.mu.Lock()
	r.skills = list
	var fresh []string
	for _, w := range warns {
		if s := w.String(); !r.warned[s] {
			r.warned[s] = true
			fresh = append(fresh, s)
		}
	}
	r.mu.Unlock()
	if r.cfg.Warn != nil {
		for _, s := range fresh {
			r.cfg.Warn(s)
		}
	}
}

// Skills are the skills found at the last discovery (New, or the start of
// the latest prompt), first name wins; none with Config.NoSkills.
func (r *Runtime) Skills() []skills.Skill {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]skills.Skill(nil), r.skills...)
}

// Skill finds a skill by name, rediscovering first.
func (r *Runtime) Skill(name string) (skills.Skill, bool) {
	r.refreshSkills()
	for _, s := range r.Skills() {
		if s.Name == name {
			return s, true
		}
	}
	return skills.Skill{}, false
}
