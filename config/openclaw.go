package config

// openClawKeys are the keys OpenClaw documents in the objects skillgate
// shares with its config and does not read itself: they are known, so
// never taken for a typo of another key, and kept as they are for
// requires.config, unchecked. Each list is the union over OpenClaw's 2026
// releases (its configuration reference at docs.openclaw.ai and its config
// schema), so that a key valid in any of them is never refused; the
// research notes behind it are summarised in docs/decisions.md.
var openClawKeys = map[string][]string{
	"": {
		"$schema", "meta", "env", "wizard", "diagnostics", "logging", "audit", "cli", "crestodian",
		"systemAgent", "update", "telemetry", "browser", "ui", "secrets", "marketplaces", "auth",
		"accessGroups", "acp", "models", "nodeHost", "worktreeRoot", "worktreeAcceleration", "tools",
		"security", "bindings", "broadcast", "audio", "media", "attachments", "messages", "tts",
		"commands", "approvals", "session", "cron", "transcripts", "commitments", "hooks", "web",
		"channels", "discovery", "canvasHost", "talk", "cloudWorkers", "desktop", "memory", "mcp",
		"plugins", "surfaces", "proxy",
	},
	"gateway": {
		"port", "mode", "bind", "customBindHost", "publicOrigin", "controlUi", "auth", "roles",
		"trustedProxies", "allowRealIpFallback", "tools", "webchat", "channelHealthCheckMinutes",
		"channelStaleEventThresholdMinutes", "channelMaxRestartsPerHour", "tailscale", "remote",
		"reload", "tls", "http", "push", "nodes", "terminal", "readiness", "cliAgents",
		"workspacePreviewMaxBytes",
	},
	"agents": {
		"ownership", "loopGovernor",
	},
	"agents.defaults": {
		"workspace", "cwd", "repoRoot", "skipBootstrap", "skipOptionalBootstrapFiles",
		"contextInjection", "bootstrapMaxChars", "bootstrapTotalMaxChars",
		"bootstrapPromptTruncationWarning", "startupContext", "contextLimits", "experimental",
		"userTimezone", "timeFormat", "envelopeTimezone", "model", "models", "modelPolicy",
		"modelSelectionScope", "utilityModel", "imageModel", "mediaModels", "imageGenerationModel",
		"voiceModel", "mediaGenerationAutoProviderFallback", "pdfMaxBytesMb", "pdfMaxPages", "params",
		"thinkingDefault", "fastModeDefault", "verboseDefault", "toolProgressDetail", "reasoningDefault",
		"elevatedDefault", "blockStreamingDefault", "blockStreamingBreak", "blockStreamingChunk",
		"blockStreamingCoalesce", "humanDelay", "typingMode", "typingIntervalSeconds", "timeoutSeconds",
		"mediaMaxMb", "imageMaxDimensionPx", "imageQuality", "contextTokens", "cliBackends",
		"memorySearch", "contextPruning", "compaction", "runRetries", "embeddedPi", "heartbeat",
		"maxConcurrent", "subagents", "sandbox", "promptOverlays", "silentReply", "systemPromptOverride",
		"agentRuntime", "systemAgent", "agentProfileId",
	},
	"agents.list[]":       openClawAgentKeys,
	"agents.<id>":         openClawAgentKeys,
	"agents.entries.<id>": openClawAgentKeys,
	"skills": {
		"allowBundled", "load", "install", "workshop",
	},
	"skills.limits": {
		"maxCandidatesPerRoot", "maxSkillsLoadedPerSource", "maxSkillsInPrompt", "maxSkillFileBytes",
	},
	"skills.entries.<key>": {
		"apiKey", "env", "config",
	},
}

// openClawAgentKeys are the keys of one OpenClaw agent (an agents.list
// entry, or agents.entries.<id> from 2026.8 on) but id and skills, which
// skillgate reads; an agents.<id> of skillgate's form may hold them too.
var openClawAgentKeys = []string{
	"default", "name", "description", "workspace", "cwd", "agentDir", "model", "utilityModel",
	"decisionModel", "models", "modelPolicy", "thinkingDefault", "verboseDefault",
	"toolProgressDetail", "reasoningDefault", "fastModeDefault", "contextInjection",
	"bootstrapMaxChars", "bootstrapTotalMaxChars", "experimental", "skillsLimits", "contextLimits",
	"contextTokens", "memory", "memorySearch", "humanDelay", "typingMode", "typingIntervalSeconds",
	"tts", "heartbeat", "identity", "groupChat", "subagents", "sandbox", "params", "tools",
	"runtime", "runRetries", "embeddedAgent", "embeddedPi", "plugins", "systemPromptOverride",
	"agentRuntime", "embeddedHarness", "compaction",
}
