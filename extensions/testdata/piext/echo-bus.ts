// Answers members' bus pings (pi.events between two extensions).
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function echoBus(pi: ExtensionAPI) {
	pi.events.on("members:ping", (data: any) => pi.events.emit("members:pong", { echoed: data.from }));
}
