package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/zot-editors/zot/internal/childproc"
)

// gitConfig pins what the user's git configuration could otherwise change
// in what a checkpoint records: bytes are stored as they are (no CRLF
// conversion), the executable bit and symlinks are kept, paths come out
// unquoted, and git never collects garbage on its own (Prune does).
var gitConfig = []string{
	"-c", "core.autocrlf=false",
	"-c", "core.safecrlf=false",
	"-c", "core.fileMode=true",
	"-c", "core.symlinks=true",
	"-c", "core.quotePath=false",
	"-c", "core.untrackedCache=true",
	"-c", "index.version=4",
	"-c", "gc.auto=0",
	"-c", "diff.noprefix=false",
	"-c", "advice.addEmbeddedRepo=false",
}

// git runs the git binary on the shadow repository: GIT_DIR is the
// store's, GIT_WORK_TREE the workspace, GIT_INDEX_FILE the store's own
// index (or index when not empty). No GIT_* variable of the user's
// environment gets through (a GIT_DIR or GIT_INDEX_FILE set for the
// user's repository would point git at it), and neither the system nor
// the global configuration is read.
func (s *Store) git(ctx context.Context, index string, stdin io.Reader, args ...string) ([]byte, error) {
	if index == "" {
		index = s.index
	}
	env := make([]string, 0, len(os.Environ())+10)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"GIT_DIR="+s.dir,
		"GIT_WORK_TREE="+s.root,
		"GIT_INDEX_FILE="+index,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=zot", "GIT_AUTHOR_EMAIL=zot@localhost",
		"GIT_COMMITTER_NAME=zot", "GIT_COMMITTER_EMAIL=zot@localhost",
		"LC_ALL=C",
	)
	var out, errb bytes.Buffer
	for attempt := 0; ; attempt++ {
		out.Reset()
		errb.Reset()
		cmd := exec.CommandContext(ctx, s.gitPath, append(append([]string{}, gitConfig...), args...)...)
		cmd.Dir, cmd.Env, cmd.Stdin = s.root, env, stdin
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := childproc.Start(cmd); err != nil {
			return nil, fmt.Errorf("checkpoint: running git: %w", err)
		}
		err := cmd.Wait()
		if err == nil {
			return out.Bytes(), nil
		}
		msg := strings.TrimSpace(errb.String())
		// Another zot process on the same workspace holds the store's
		// index for a moment: wait for it, briefly.
		if strings.Contains(msg, "index.lock") && attempt < 20 && ctx.Err() == nil && stdin == nil {
			time.Sleep(25 * time.Millisecond)
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("checkpoint: git %s: %v: %s", args[0], err, msg)
	}
}

// errNoGit says what to install.
var errNoGit = errors.New("checkpoints need the git binary on PATH (install git); zot runs without checkpoints meanwhile")
