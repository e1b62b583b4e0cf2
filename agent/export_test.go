package agent

import "context"

// HoldCheckpoints makes r's prompt checkpoints observable: hold runs in
// each recording before the store takes it (block it to keep the
// recording going), awaiting whenever something waits for a recording
// that is not done.
func HoldCheckpoints(r *Runtime, hold func(ctx context.Context), awaiting func()) {
	r.ckpt.hold, r.ckpt.awaiting = hold, awaiting
}
